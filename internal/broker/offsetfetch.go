package broker

// OffsetFetch: v0-10
//
// v8+ asks for several groups at once; null topics (v2+) means every
// committed offset of the group. RequireStable (v7+) is accepted. The v9+
// member id and epoch are checked for KIP-848 consumer groups
// (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH). v10 names topics by id: an id
// the cluster does not know is UNKNOWN_TOPIC_ID, and offsets of topics
// that no longer exist are left out of an all-topics answer.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetFetch, 0, 10, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetFetchRequest)
	var resp *kmsg.OffsetFetchResponse
	if req.Version >= 10 {
		resp = offsetFetchByID(b, req)
	} else {
		resp = b.groups.OffsetFetch(req)
	}
	if b.authz.acl == nil {
		r.respond(resp)
		return
	}
	// Authorization (Kafka's rules): DESCRIBE on the group, else the
	// group's answer is GROUP_AUTHORIZATION_FAILED; DESCRIBE on each topic,
	// else its partitions are TOPIC_AUTHORIZATION_FAILED when named, and
	// left out when every topic was asked for.
	if r.hdr.APIVersion >= 8 {
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !b.authorizeGroup(r, kmsg.ACLOperationDescribe, g.Group) {
				g.ErrorCode, g.Topics = kerr.GroupAuthorizationFailed.Code, nil
				continue
			}
			named := i < len(req.Groups) && req.Groups[i].Topics != nil
			kept := g.Topics[:0]
			for _, t := range g.Topics {
				if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic) {
					if !named {
						continue
					}
					for j := range t.Partitions {
						p := &t.Partitions[j]
						p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), kerr.TopicAuthorizationFailed.Code
					}
				}
				kept = append(kept, t)
			}
			g.Topics = kept
		}
		r.respond(resp)
		return
	}
	if !b.authorizeGroup(r, kmsg.ACLOperationDescribe, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.Topics = nil
		if r.hdr.APIVersion < 2 { // no top-level error: each partition carries it
			resp.ErrorCode = 0
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.GroupAuthorizationFailed.Code
					rp.Metadata = kmsg.StringPtr("")
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
		r.respond(resp)
		return
	}
	named := req.Topics != nil || r.hdr.APIVersion < 2
	kept := resp.Topics[:0]
	for _, t := range resp.Topics {
		if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic) {
			if !named {
				continue
			}
			for j := range t.Partitions {
				p := &t.Partitions[j]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), kerr.TopicAuthorizationFailed.Code
			}
		}
		kept = append(kept, t)
	}
	resp.Topics = kept
	r.respond(resp)
}

// offsetFetchByID maps v10's topic ids to names, fetches, and answers
// with ids.
func offsetFetchByID(b *Broker, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	sub := *req
	sub.Groups = make([]kmsg.OffsetFetchRequestGroup, len(req.Groups))
	unknown := make([][]kmsg.OffsetFetchResponseGroupTopic, len(req.Groups))
	for i, g := range req.Groups {
		sub.Groups[i] = g
		if g.Topics == nil {
			continue
		}
		sub.Groups[i].Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, t := range g.Topics {
			ts := b.topicByID(t.TopicID)
			if ts == nil {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.TopicID = t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.UnknownTopicID.Code
					rp.Metadata = kmsg.StringPtr("")
					rt.Partitions = append(rt.Partitions, rp)
				}
				unknown[i] = append(unknown[i], rt)
				continue
			}
			t.Topic = ts.name
			sub.Groups[i].Topics = append(sub.Groups[i].Topics, t)
		}
	}
	resp := b.groups.OffsetFetch(&sub)
	for i := range resp.Groups {
		g := &resp.Groups[i]
		kept := g.Topics[:0]
		for _, t := range g.Topics {
			ts := b.topic(t.Topic)
			if ts == nil {
				continue // no id to answer with: the topic is gone
			}
			t.TopicID = ts.id
			kept = append(kept, t)
		}
		g.Topics = kept
		if i < len(unknown) && g.ErrorCode == 0 {
			g.Topics = append(g.Topics, unknown[i]...)
		}
	}
	return resp
}
