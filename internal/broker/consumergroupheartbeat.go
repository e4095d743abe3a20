package broker

// ConsumerGroupHeartbeat: v0-1
//
// KIP-848 consumer groups: a member joins, heartbeats and reconciles its
// assignment, or leaves, all through this one API (internal/group,
// consumer.go). Authorization: READ on the group, else
// GROUP_AUTHORIZATION_FAILED; a topic the member subscribes to by name
// that it may not DESCRIBE fails the request with
// TOPIC_AUTHORIZATION_FAILED, as Kafka does. When
// group.coordinator.rebalance.protocols does not list consumer the answer
// is UNSUPPORTED_VERSION (clients fall back to the classic protocol).

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ConsumerGroupHeartbeat, 0, 1, handleConsumerGroupHeartbeat) }

func handleConsumerGroupHeartbeat(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	fail := func(code int16) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		r.respond(resp)
	}
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group) {
		fail(kerr.GroupAuthorizationFailed.Code)
		return
	}
	if b.authz.acl != nil {
		for _, t := range req.SubscribedTopicNames {
			if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t) {
				fail(kerr.TopicAuthorizationFailed.Code)
				return
			}
		}
	}
	if b.isShareGroup(req.Group) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		msg := "Group " + req.Group + " is not a consumer group."
		resp.ErrorMessage = &msg
		r.respond(resp)
		return
	}
	host := r.c.nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	r.respond(b.groups.ConsumerGroupHeartbeat(req, r.hdr.ClientID, "/"+host))
}
