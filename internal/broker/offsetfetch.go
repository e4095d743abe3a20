package broker

// OffsetFetch: v0-9
//
// v8+ asks for several groups at once; null topics (v2+) means every
// committed offset of the group. RequireStable (v7+) is accepted: without
// transactions every committed offset is stable. The v9 member id and
// epoch (KIP-848 groups) are ignored.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetFetch, 0, 9, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetFetchRequest)
	resp := b.groups.OffsetFetch(req)
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
