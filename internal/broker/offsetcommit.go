package broker

// OffsetCommit: v0-10
//
// One batch per request in __consumer_offsets, acknowledged after the
// append. Generation -1 commits without membership (Empty groups only).
// For a KIP-848 consumer group the generation is the member epoch
// (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID). v10 names topics by id: an id
// the cluster does not know is UNKNOWN_TOPIC_ID for its partitions.
// A v2-4 RetentionTimeMillis other than -1 gives the offsets their own
// expiry (value version 1 with its expire timestamp), as in Kafka 4;
// otherwise offsets.retention.minutes applies.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetCommit, 0, 10, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetCommitRequest)
	if req.Version >= 10 {
		handleOffsetCommitByID(b, r, req)
		return
	}
	r.respond(offsetCommit(b, r, req))
}

// handleOffsetCommitByID maps v10's topic ids to names, commits, and
// answers with the ids.
func handleOffsetCommitByID(b *Broker, r *request, req *kmsg.OffsetCommitRequest) {
	byName := req.Topics[:0:0]
	var unknown []kmsg.OffsetCommitResponseTopic
	ids := map[string][16]byte{}
	for _, t := range req.Topics {
		ts := b.topicByID(t.TopicID)
		if ts == nil {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			unknown = append(unknown, rt)
			continue
		}
		t.Topic = ts.name
		ids[ts.name] = ts.id
		byName = append(byName, t)
	}
	sub := *req
	sub.Topics = byName
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(byName) > 0 || len(unknown) == 0 {
		resp = offsetCommit(b, r, &sub)
	}
	for i := range resp.Topics {
		resp.Topics[i].TopicID = ids[resp.Topics[i].Topic]
	}
	resp.Topics = append(resp.Topics, unknown...)
	r.respond(resp)
}

func offsetCommit(b *Broker, r *request, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	if b.authz.acl == nil {
		return b.groups.OffsetCommit(req)
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
	return resp
}
