package broker

// AlterUserScramCredentials: v0
//
// Validated as Kafka's ScramControlManager.alterCredentials: a user changed
// twice in one request (whatever the mechanism) is DUPLICATE_RESOURCE, an
// empty name or too few/many iterations UNACCEPTABLE_CREDENTIAL, an unknown
// mechanism UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not
// exist RESOURCE_NOT_FOUND. Accepted changes are applied in one metadata
// record. The client sends the salted password; the broker keeps only the
// stored and server keys derived from it. Needs ALTER on the cluster.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

func init() { register(kmsg.AlterUserSCRAMCredentials, 0, 0, handleAlterUserScramCredentials) }

// Kafka's bounds on SCRAM iterations (ScramMechanism.minIterations and
// ScramControlManager.MAX_ITERATIONS).
const (
	scramMinIterations = 4096
	scramMaxIterations = 16384
)

func handleAlterUserScramCredentials(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	result := func(user string, code int16, msg string) {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode = user, code
		if msg != "" {
			res.ErrorMessage = &msg
		}
		resp.Results = append(resp.Results, res)
	}
	if !b.authorizeCluster(r, kmsg.ACLOperationAlter) {
		seen := map[string]bool{}
		for _, d := range req.Deletions {
			if !seen[d.Name] {
				seen[d.Name] = true
				result(d.Name, kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message)
			}
		}
		for _, u := range req.Upsertions {
			if !seen[u.Name] {
				seen[u.Name] = true
				result(u.Name, kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message)
			}
		}
		r.respond(resp)
		return
	}
	type failure struct {
		code int16
		msg  string
	}
	const dupMsg = "A user credential cannot be altered twice in the same request"
	failed := map[string]failure{}
	var order []string // users in first-seen order
	changes := map[string]metadata.ScramChange{}
	note := func(user string) {
		if _, ok := failed[user]; !ok {
			if _, ok := changes[user]; !ok {
				order = append(order, user)
			}
		}
	}
	validName := func(user string, mech int8) *failure {
		if user == "" {
			return &failure{kerr.UnacceptableCredential.Code, "Username must not be empty"}
		}
		if scramMechanismName(mech) == "" {
			return &failure{kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"}
		}
		return nil
	}
	im := b.meta.Image()
	for _, d := range req.Deletions {
		note(d.Name)
		if _, bad := failed[d.Name]; bad {
			continue
		}
		if _, dup := changes[d.Name]; dup {
			delete(changes, d.Name)
			failed[d.Name] = failure{kerr.DuplicateResource.Code, dupMsg}
			continue
		}
		if f := validName(d.Name, d.Mechanism); f != nil {
			failed[d.Name] = *f
			continue
		}
		mech := scramMechanismName(d.Mechanism)
		if _, ok := scramCredential(im, d.Name, mech); !ok {
			failed[d.Name] = failure{kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"}
			continue
		}
		changes[d.Name] = metadata.ScramChange{User: d.Name, Mechanism: mech}
	}
	for _, u := range req.Upsertions {
		note(u.Name)
		if _, bad := failed[u.Name]; bad {
			continue
		}
		if _, dup := changes[u.Name]; dup {
			delete(changes, u.Name)
			failed[u.Name] = failure{kerr.DuplicateResource.Code, dupMsg}
			continue
		}
		if f := validName(u.Name, u.Mechanism); f != nil {
			failed[u.Name] = *f
			continue
		}
		switch {
		case u.Iterations < scramMinIterations:
			failed[u.Name] = failure{kerr.UnacceptableCredential.Code, "Too few iterations"}
			continue
		case u.Iterations > scramMaxIterations:
			failed[u.Name] = failure{kerr.UnacceptableCredential.Code, "Too many iterations"}
			continue
		}
		mech := scramMechanismName(u.Mechanism)
		cred, err := sasl.ScramCredentialFromSalted(mech, u.Salt, u.SaltedPassword, u.Iterations)
		if err != nil {
			failed[u.Name] = failure{kerr.UnacceptableCredential.Code, err.Error()}
			continue
		}
		changes[u.Name] = metadata.ScramChange{User: u.Name, Mechanism: mech, Credential: &cred}
	}
	var batch []metadata.ScramChange
	var batchUsers []string
	for _, user := range order {
		if c, ok := changes[user]; ok {
			batch = append(batch, c)
			batchUsers = append(batchUsers, user)
		}
	}
	if len(batch) > 0 {
		errs, err := b.meta.AlterScramCredentials(batch)
		for i, user := range batchUsers {
			e := err
			if e == nil && i < len(errs) {
				e = errs[i]
			}
			switch {
			case e == nil:
			case errors.Is(e, metadata.ErrResourceNotFound):
				failed[user] = failure{kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"}
			default:
				failed[user] = failure{clusterErrorCode(e), e.Error()}
			}
		}
	}
	for _, user := range order {
		if f, ok := failed[user]; ok {
			result(user, f.code, f.msg)
		} else {
			result(user, 0, "")
		}
	}
	r.respond(resp)
}
