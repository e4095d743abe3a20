package broker

// JoinGroup: v0-9
//
// The request parks in the group coordinator until the rebalance completes
// and is answered from the coordinator's goroutine; the io goroutine is
// free at once. MEMBER_ID_REQUIRED on v4+ for a new dynamic member;
// static members (v5+ group.instance.id, KIP-345). A JoinGroup to a KIP-848
// consumer group with members is served as a classic member of it (online
// migration, internal/group/migration.go).

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.JoinGroup, 0, 9, handleJoinGroup) }

func handleJoinGroup(b *Broker, r *request) {
	req := r.kreq.(*kmsg.JoinGroupRequest)
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		if r.hdr.APIVersion >= 7 {
			resp.Protocol = nil
		}
		r.respond(resp)
		return
	}
	if b.isShareGroup(req.Group) {
		// Kafka: GroupIdNotFoundException "Group X is not a classic group."
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupIDNotFound.Code, -1
		if r.hdr.APIVersion >= 7 {
			resp.Protocol = nil
		}
		r.respond(resp)
		return
	}
	host := r.c.nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	b.groups.JoinGroup(req, r.hdr.ClientID, "/"+host, func(resp *kmsg.JoinGroupResponse) {
		b.metrics.classicRebalanced(resp.ErrorCode, resp.MemberID, resp.LeaderID)
		r.respond(resp)
	})
}
