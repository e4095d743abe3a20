package broker

// DescribeUserScramCredentials: v0
//
// Answered from the metadata image, as Kafka's ScramImage.describe: no
// users (null or empty) means every user with a credential; a user named
// twice is DUPLICATE_RESOURCE, one without a credential
// RESOURCE_NOT_FOUND. Needs DESCRIBE on the cluster.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security"
)

func init() { register(kmsg.DescribeUserSCRAMCredentials, 0, 0, handleDescribeUserScramCredentials) }

// scramMechanismType is the wire code of a SCRAM mechanism (Kafka's
// ScramMechanism.type), 0 for an unknown one.
func scramMechanismType(name string) int8 {
	switch name {
	case security.ScramSHA256:
		return 1
	case security.ScramSHA512:
		return 2
	}
	return 0
}

// scramMechanismName is the mechanism of a wire code, "" for an unknown one.
func scramMechanismName(t int8) string {
	switch t {
	case 1:
		return security.ScramSHA256
	case 2:
		return security.ScramSHA512
	}
	return ""
}

func handleDescribeUserScramCredentials(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		// Kafka's error response: the top-level error, and one result
		// with it per user asked for.
		msg := kerr.ClusterAuthorizationFailed.Message
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
		for _, u := range req.Users {
			res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			res.User, res.ErrorCode, res.ErrorMessage = u.Name, resp.ErrorCode, &msg
			resp.Results = append(resp.Results, res)
		}
		r.respond(resp)
		return
	}
	im := b.meta.Image()
	var users []string
	dup := map[string]bool{}
	if len(req.Users) == 0 {
		for u := range im.Scram {
			users = append(users, u)
		}
		slices.Sort(users)
	} else {
		seen := map[string]bool{}
		for _, u := range req.Users {
			if seen[u.Name] {
				dup[u.Name] = true
				continue
			}
			seen[u.Name] = true
			users = append(users, u.Name)
		}
	}
	for _, u := range users {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u
		switch creds := im.Scram[u]; {
		case dup[u]:
			msg := "Cannot describe SCRAM credentials for the same user twice in a single request: " + u
			res.ErrorCode, res.ErrorMessage = kerr.DuplicateResource.Code, &msg
		case len(creds) == 0:
			msg := "Attempt to describe a user credential that does not exist: " + u
			res.ErrorCode, res.ErrorMessage = kerr.ResourceNotFound.Code, &msg
		default:
			for _, c := range creds {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = scramMechanismType(c.Mechanism), c.Iterations
				res.CredentialInfos = append(res.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, res)
	}
	r.respond(resp)
}
