package broker

// ShareGroupHeartbeat: v1 (Kafka 4.2; v0 was KIP-932's early access)
//
// Joins (epoch 0), keeps alive, and leaves (epoch -1) a share group on
// its coordinator, answering with the member epoch and, when it changed
// or the request is a full one, the member's assignment. Membership is
// internal/share's Coordinator. A group id that names a classic or
// consumer group answers GROUP_ID_NOT_FOUND, as Kafka's coordinator
// refuses a group of another type.

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ShareGroupHeartbeat, 1, 1, handleShareGroupHeartbeat) }

func handleShareGroupHeartbeat(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ShareGroupHeartbeatRequest)
	fail := func(err *kerr.Error, msg string) {
		resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		r.respond(resp)
	}
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.GroupID) {
		fail(kerr.GroupAuthorizationFailed, "")
		return
	}
	switch {
	case req.GroupID == "":
		fail(kerr.InvalidRequest, "GroupId can't be empty.")
		return
	case req.MemberID == "" || len(req.MemberID) > 36:
		fail(kerr.InvalidRequest, "MemberId can't be empty.")
		return
	case req.MemberEpoch < -1:
		fail(kerr.InvalidRequest, "MemberEpoch is invalid.")
		return
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		fail(kerr.InvalidRequest, "SubscribedTopicNames must be set in first request.")
		return
	case req.RackID != nil && *req.RackID == "":
		fail(kerr.InvalidRequest, "RackId can't be empty.")
		return
	}
	for _, t := range req.SubscribedTopicNames {
		if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t) {
			fail(kerr.TopicAuthorizationFailed, "")
			return
		}
	}
	if code := b.shareCoordinatorCheck(req.GroupID); code != 0 {
		fail(kerr.ErrorForCode(code).(*kerr.Error), "")
		return
	}
	if b.isConsumerGroup(req.GroupID) {
		fail(kerr.GroupIDNotFound, "Group "+req.GroupID+" is not a share group.")
		return
	}
	host := r.c.nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	r.respond(b.shares.coord.Heartbeat(req, r.hdr.ClientID, "/"+host))
}
