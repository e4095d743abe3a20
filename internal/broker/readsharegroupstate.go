package broker

// ReadShareGroupState: v0 (inter-broker, KIP-932)
//
// A share-partition leader reads a share-partition's state from the
// share coordinator (the leader of the key's __share_group_state
// partition) when it starts serving it. A share-partition without state
// answers start offset -1 and state epoch 0 (Kafka's uninitialized
// answer). Needs CLUSTER_ACTION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.ReadShareGroupState, 0, 0, handleReadShareGroupState) }

func handleReadShareGroupState(b *Broker, r *request) { b.goShare(r, b.readShareGroupState) }

func (b *Broker) readShareGroupState(r *request) {
	req := r.kreq.(*kmsg.ReadShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	allowed := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.StartOffset = p.Partition, -1
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
				rp.StateEpoch, rp.StartOffset = st.StateEpoch, st.StartOffset
				for _, sb := range st.Batches {
					b := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount = sb.FirstOffset, sb.LastOffset, int8(sb.State), sb.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, b)
				}
				return nil
			})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}
