package broker

// OffsetDelete: v0
//
// GROUP_SUBSCRIBED_TO_TOPIC for topics an active consumer group's members
// subscribe to; NON_EMPTY_GROUP for an active group of another protocol.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetDelete, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetDeleteRequest)
	if b.authz.acl == nil {
		r.respond(b.groups.OffsetDelete(req))
		return
	}
	// DELETE on the group, else GROUP_AUTHORIZATION_FAILED; READ on each
	// topic, else its partitions are TOPIC_AUTHORIZATION_FAILED.
	if !b.authorizeGroup(r, kmsg.ACLOperationDelete, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	sub := *req
	sub.Topics = nil
	var denied []kmsg.OffsetDeleteResponseTopic
	for _, t := range req.Topics {
		if b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, t.Topic) {
			sub.Topics = append(sub.Topics, t)
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := b.groups.OffsetDelete(&sub)
	if resp.ErrorCode == 0 {
		resp.Topics = append(resp.Topics, denied...)
	}
	r.respond(resp)
}
