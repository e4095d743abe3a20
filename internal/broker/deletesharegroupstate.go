package broker

// DeleteShareGroupState: v0 (inter-broker, KIP-932)
//
// Deletes share-partitions' state at the share coordinator (a tombstone
// in __share_group_state). Silkworm's DeleteShareGroupOffsets and
// DeleteGroups write the tombstone through WriteShareGroupState; this
// answers brokers and tools that use Kafka's call. Needs CLUSTER_ACTION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.DeleteShareGroupState, 0, 0, handleDeleteShareGroupState) }

func handleDeleteShareGroupState(b *Broker, r *request) { b.goShare(r, b.deleteShareGroupState) }

func (b *Broker) deleteShareGroupState(r *request) {
	req := r.kreq.(*kmsg.DeleteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	allowed := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
			if !allowed {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			} else {
				rp.ErrorCode = b.shareStateLocally(key, func(idx int32, l share.StateLog, epoch int32) error {
					return b.shares.store.Delete(idx, epoch, l, key)
				})
				if rp.ErrorCode == 0 {
					b.shares.mgr.Drop(key)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}
