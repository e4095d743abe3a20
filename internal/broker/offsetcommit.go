package broker

// OffsetCommit: v0-9
//
// One batch per request in __consumer_offsets, acknowledged after the
// append. Generation -1 commits without membership (Empty groups only).
// Deviation: the v2-4 RetentionTimeMillis is ignored (Kafka ignores it too
// since 2.1 for groups it manages); offsets.retention.minutes applies.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetCommit, 0, 9, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetCommitRequest)
	if b.authz.acl == nil {
		r.respond(b.groups.OffsetCommit(req))
		return
	}
	// Authorization: READ on the group, else every partition is
	// GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions
	// are TOPIC_AUTHORIZATION_FAILED and the others are still committed.
	groupOK := b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group)
	var denied []kmsg.OffsetCommitResponseTopic
	allowed := req.Topics[:0:0]
	for _, t := range req.Topics {
		code := int16(0)
		switch {
		case !groupOK:
			code = kerr.GroupAuthorizationFailed.Code
		case !b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, t.Topic):
			code = kerr.TopicAuthorizationFailed.Code
		}
		if code == 0 {
			allowed = append(allowed, t)
			continue
		}
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(allowed) > 0 || len(denied) == 0 {
		sub := *req
		sub.Topics = allowed
		resp = b.groups.OffsetCommit(&sub)
	}
	resp.Topics = append(denied, resp.Topics...)
	r.respond(resp)
}
