package broker

// DescribeGroups: v0-6
//
// Unknown groups and KIP-848 consumer groups are reported as Dead with no
// error before v6 and GROUP_ID_NOT_FOUND with a message from v6, as Kafka 4
// does.
// Without an authorizer every group operation is reported as allowed.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeGroups, 0, 6, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeGroupsRequest)
	resp := b.groups.DescribeGroups(req)
	if b.authz.acl != nil {
		// DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED and
		// nothing of it.
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !b.authorizeGroup(r, kmsg.ACLOperationDescribe, g.Group) {
				d := kmsg.NewDescribeGroupsResponseGroup()
				d.Group, d.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
				*g = d
				continue
			}
			g.AuthorizedOperations = b.authorizedOperations(r, req.IncludeAuthorizedOperations,
				kmsg.ACLResourceTypeGroup, g.Group)
		}
	}
	r.respond(resp)
}
