package broker

// SyncGroup: v0-5
//
// Followers park until the leader's assignment arrives; the coordinator
// answers them from the leader's request goroutine.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.SyncGroup, 0, 5, handleSyncGroup) }

func handleSyncGroup(b *Broker, r *request) {
	req := r.kreq.(*kmsg.SyncGroupRequest)
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	b.groups.SyncGroup(req, func(resp *kmsg.SyncGroupResponse) { r.respond(resp) })
}
