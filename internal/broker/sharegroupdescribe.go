package broker

// ShareGroupDescribe: v1 (Kafka 4.2)
//
// Describes share groups this broker coordinates: state, epochs, and
// each member with its subscription and assignment. A group that is not
// a share group answers GROUP_ID_NOT_FOUND.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ShareGroupDescribe, 1, 1, handleShareGroupDescribe) }

func handleShareGroupDescribe(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ShareGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		g := kmsg.NewShareGroupDescribeResponseGroup()
		g.GroupID = id
		g.AuthorizedOperations = -2147483648
		switch {
		case !b.authorizeGroup(r, kmsg.ACLOperationDescribe, id):
			g.ErrorCode = kerr.GroupAuthorizationFailed.Code
		default:
			if code := b.shareCoordinatorCheck(id); code != 0 {
				g.ErrorCode = code
				break
			}
			if b.isConsumerGroup(id) {
				g.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "Group " + id + " is not a share group."
				g.ErrorMessage = &msg
				break
			}
			g = b.shares.coord.Describe(id)
			if g.ErrorCode == 0 {
				g.AuthorizedOperations = b.authorizedOperations(r, req.IncludeAuthorizedOperations, kmsg.ACLResourceTypeGroup, id)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	r.respond(resp)
}
