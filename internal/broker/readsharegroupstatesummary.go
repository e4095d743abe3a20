package broker

// ReadShareGroupStateSummary: v0-1 (inter-broker, KIP-932)
//
// The state epoch, leader epoch and start offset of share-partitions at
// the share coordinator (v1 adds the acknowledged or archived records
// above the start offset, DeliveryCompleteCount); a share-partition
// without state answers start offset -1. Needs CLUSTER_ACTION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.ReadShareGroupStateSummary, 0, 1, handleReadShareGroupStateSummary) }

func handleReadShareGroupStateSummary(b *Broker, r *request) {
	b.goShare(r, b.readShareGroupStateSummary)
}

func (b *Broker) readShareGroupStateSummary(r *request) {
	req := r.kreq.(*kmsg.ReadShareGroupStateSummaryRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	allowed := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.StartOffset, rp.LeaderEpoch = p.Partition, -1, -1
			if !allowed {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
			rp.ErrorCode = b.shareStateLocally(key, func(idx int32, l share.StateLog, epoch int32) error {
				st, ok, err := b.shares.store.Read(idx, epoch, l, key)
				if err != nil || !ok {
					return err
				}
				rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = st.StateEpoch, st.LeaderEpoch, st.StartOffset
				rp.DeliveryCompleteCount = 0 // kmsg's default is -1 (unknown)
				for _, sb := range st.Batches {
					if sb.State == share.Acknowledged || sb.State == share.Archived {
						rp.DeliveryCompleteCount += int32(sb.LastOffset - sb.FirstOffset + 1)
					}
				}
				return nil
			})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}
