package broker

// CreateAcls: v0-3
//
// Adds ACL bindings to the metadata log, so that every broker enforces the
// same set. Needs ALTER on the cluster; without an authorizer configured
// every creation is SECURITY_DISABLED, as in Kafka. An invalid binding is
// INVALID_REQUEST with the reason; valid ones in the same request are
// still created. v0 has no pattern type: its bindings are LITERAL.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security/acl"
)

func init() { register(kmsg.CreateACLs, 0, 3, handleCreateAcls) }

// errNoAuthorizer is Kafka's message for ACL requests without an authorizer.
const errNoAuthorizer = "No Authorizer is configured on the broker"

// aclAccess is whether the request may use the ACL APIs with op on the
// cluster: 0, or the error code and message to answer (SECURITY_DISABLED
// without an authorizer, CLUSTER_AUTHORIZATION_FAILED without op).
func (b *Broker) aclAccess(r *request, op kmsg.ACLOperation) (int16, string) {
	switch {
	case b.authz.acl == nil:
		return kerr.SecurityDisabled.Code, errNoAuthorizer
	case !b.authorizeCluster(r, op):
		return kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message
	}
	return 0, ""
}

func handleCreateAcls(b *Broker, r *request) {
	req := r.kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	fail := func(i int, code int16, msg string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, &msg
	}
	denied, deniedMsg := b.aclAccess(r, kmsg.ACLOperationAlter)
	var add []acl.Binding
	var addIdx []int
	for i, c := range req.Creations {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		if denied != 0 {
			fail(i, denied, deniedMsg)
			continue
		}
		bd := acl.Binding{
			ResourceType: c.ResourceType, ResourceName: c.ResourceName, PatternType: c.ResourcePatternType,
			Principal: c.Principal, Host: c.Host, Operation: c.Operation, Permission: c.PermissionType,
		}
		if r.hdr.APIVersion == 0 {
			bd.PatternType = kmsg.ACLResourcePatternTypeLiteral
		}
		if err := acl.ValidateBinding(bd); err != nil {
			fail(i, kerr.InvalidRequest.Code, err.Error())
			continue
		}
		add = append(add, bd)
		addIdx = append(addIdx, i)
	}
	if len(add) > 0 {
		if err := b.meta.CreateACLs(add); err != nil {
			for _, i := range addIdx {
				fail(i, clusterErrorCode(err), err.Error())
			}
		}
	}
	r.respond(resp)
}
