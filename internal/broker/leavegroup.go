package broker

// LeaveGroup: v0-5
//
// v3+ removes a batch of members, each with its own error code; static
// members may leave by group.instance.id.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.LeaveGroup, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, r *request) {
	req := r.kreq.(*kmsg.LeaveGroupRequest)
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	r.respond(b.groups.LeaveGroup(req))
}
