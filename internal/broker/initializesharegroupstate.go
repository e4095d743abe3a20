package broker

// InitializeShareGroupState: v0 (inter-broker, KIP-932)
//
// Sets a share-partition's state epoch and start offset at the share
// coordinator, with no in-flight records (an older state epoch than the
// stored one is FENCED_STATE_EPOCH). Silkworm's share-partition leaders
// and AlterShareGroupOffsets write the state with WriteShareGroupState
// instead; this answers brokers and tools that use Kafka's call. Needs
// CLUSTER_ACTION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.InitializeShareGroupState, 0, 0, handleInitializeShareGroupState) }

func handleInitializeShareGroupState(b *Broker, r *request) {
	b.goShare(r, b.initializeShareGroupState)
}

func (b *Broker) initializeShareGroupState(r *request) {
	req := r.kreq.(*kmsg.InitializeShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	allowed := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
			switch {
			case !allowed:
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case p.StartOffset < 0:
				rp.ErrorCode = kerr.InvalidRequest.Code
			default:
				rp.ErrorCode = b.shareStateLocally(key, func(idx int32, l share.StateLog, epoch int32) error {
					cur, ok, err := b.shares.store.Read(idx, epoch, l, key)
					if err != nil {
						return err
					}
					if ok && p.StateEpoch < cur.StateEpoch {
						return share.ErrFencedStateEpoch
					}
					return b.shares.store.Write(idx, epoch, l, key, share.State{StateEpoch: p.StateEpoch, LeaderEpoch: cur.LeaderEpoch, StartOffset: p.StartOffset})
				})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}
