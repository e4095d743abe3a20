package broker

// ConsumerGroupDescribe: v0-1
//
// Describes KIP-848 consumer groups: epochs, assignor, members with their
// subscriptions, current and target assignments. A classic group or an
// unknown id is GROUP_ID_NOT_FOUND, as Kafka answers. Authorization:
// DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED for it.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ConsumerGroupDescribe, 0, 1, handleConsumerGroupDescribe) }

func handleConsumerGroupDescribe(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := b.groups.ConsumerGroupDescribe(req)
	if b.authz.acl != nil {
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !b.authorizeGroup(r, kmsg.ACLOperationDescribe, g.Group) {
				d := kmsg.NewConsumerGroupDescribeResponseGroup()
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
