package broker

// Heartbeat: v0-4
//
// Keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.Heartbeat, 0, 4, handleHeartbeat) }

func handleHeartbeat(b *Broker, r *request) {
	req := r.kreq.(*kmsg.HeartbeatRequest)
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	r.respond(b.groups.Heartbeat(req))
}
