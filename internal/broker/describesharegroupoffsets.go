package broker

// DescribeShareGroupOffsets: v0-1
//
// The share-partition start offset (SPSO) of each partition of a share
// group, read from the share coordinators, on the group's coordinator:
// -1 for a partition the group has not consumed. With no topics listed
// (v1 null), every topic the group's members subscribed to (Kafka's
// initialized topics), so an empty group still shows its offsets. v1's Lag is
// the records at or above the SPSO not yet acknowledged or archived,
// known only where this broker leads the partition (else -1).
//
// Deviation: a share group whose members are gone since this broker
// became coordinator is unknown here (membership is in memory); listing
// its topics explicitly still reads their state.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.DescribeShareGroupOffsets, 0, 1, handleDescribeShareGroupOffsets) }

func handleDescribeShareGroupOffsets(b *Broker, r *request) {
	b.goShare(r, b.describeShareGroupOffsets)
}

func (b *Broker) describeShareGroupOffsets(r *request) {
	req := r.kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	im := b.meta.Image()
	for _, g := range req.Groups {
		rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		rg.GroupID = g.GroupID
		if !b.authorizeGroup(r, kmsg.ACLOperationDescribe, g.GroupID) {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		if code := b.shareCoordinatorCheck(g.GroupID); code != 0 {
			rg.ErrorCode = code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		topics := g.Topics
		if topics == nil {
			if !b.shares.coord.HasGroup(g.GroupID) {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "Group " + g.GroupID + " not found."
				rg.ErrorMessage = &msg
				resp.Groups = append(resp.Groups, rg)
				continue
			}
			for _, name := range b.shares.coord.ConsumedTopics(g.GroupID) {
				if t := im.Topics[name]; t != nil {
					dt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
					dt.Topic = name
					for i := range t.Partitions {
						dt.Partitions = append(dt.Partitions, int32(i))
					}
					topics = append(topics, dt)
				}
			}
		}
		for _, dt := range topics {
			if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, dt.Topic) {
				continue // Kafka leaves out topics the caller may not describe
			}
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic = dt.Topic
			t := im.Topics[dt.Topic]
			if t != nil {
				rt.TopicID = t.ID
			}
			for _, p := range dt.Partitions {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
				if t == nil || p < 0 || int(p) >= len(t.Partitions) {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				key := share.Key{Group: g.GroupID, TopicID: t.ID, Partition: p}
				st, ok, err := sharePersister{b}.Read(key)
				switch {
				case err != nil:
					rp.ErrorCode = shareStateErrorCode(err)
				case ok:
					rp.StartOffset = st.StartOffset
					rp.LeaderEpoch = t.Partitions[p].LeaderEpoch
					rp.Lag = b.shareLag(dt.Topic, p, st)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	r.respond(resp)
}

// shareLag is the records of a share-partition not yet acknowledged or
// archived (from the SPSO to the high watermark), or -1 when this broker
// does not lead the partition.
func (b *Broker) shareLag(topic string, p int32, st share.State) int64 {
	_, part := b.partition(topic, p)
	if part == nil || !part.IsLeader() {
		return -1
	}
	lag := part.HighWatermark() - st.StartOffset
	for _, sb := range st.Batches {
		if sb.State == share.Acknowledged || sb.State == share.Archived {
			lag -= sb.LastOffset - sb.FirstOffset + 1
		}
	}
	return max(lag, 0)
}
