package broker

// WriteShareGroupState: v0-1 (inter-broker, KIP-932)
//
// A share-partition leader persists a share-partition's state at the
// share coordinator, the leader of the key's __share_group_state
// partition; the answer comes once the record is committed. Needs
// CLUSTER_ACTION. Deviation: every write carries the whole state (the
// SPSO and all in-flight batches) and replaces the stored one, where
// Kafka's carries the changed batches and merges them.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.WriteShareGroupState, 0, 1, handleWriteShareGroupState) }

func handleWriteShareGroupState(b *Broker, r *request) { b.goShare(r, b.writeShareGroupState) }

func (b *Broker) writeShareGroupState(r *request) {
	req := r.kreq.(*kmsg.WriteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	allowed := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if !allowed {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
			st := share.State{StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset}
			for _, sb := range p.StateBatches {
				st.Batches = append(st.Batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset,
					State: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
			}
			rp.ErrorCode = b.shareStateLocally(key, func(idx int32, l share.StateLog, epoch int32) error {
				return b.shares.store.Write(idx, epoch, l, key, st)
			})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}

// shareStateLocally runs fn on the local share coordinator of key, or
// answers NOT_COORDINATOR when this broker does not lead key's state
// partition.
func (b *Broker) shareStateLocally(key share.Key, fn func(idx int32, l share.StateLog, epoch int32) error) int16 {
	ts, err := b.ensureShareStateTopic()
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	idx := shareStatePartition(key, int32(len(ts.partitions)))
	l, epoch, code := b.localShareState(idx)
	if code != 0 {
		return code
	}
	return shareStateErrorCode(fn(idx, l, epoch))
}
