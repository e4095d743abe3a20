package broker

// OffsetForLeaderEpoch: v0-4
//
// For each partition, the largest leader epoch at or below the requested
// one and the offset where it ends (the start of the next epoch, or the
// log end offset for the latest), from the log's leader epoch cache, as
// Kafka's Partition.lastOffsetForLeaderEpoch; -1, -1 without error when
// the epoch is older than every epoch the log knows. A CurrentLeaderEpoch
// (v2+, -1 = unchecked) older than the partition's is FENCED_LEADER_EPOCH,
// a newer one UNKNOWN_LEADER_EPOCH (any value other than -1 is checked, as
// Kafka's Partition.checkCurrentLeaderEpoch). Every request must go to the
// leader, NOT_LEADER_OR_FOLLOWER otherwise, whatever its ReplicaID (v3+):
// Kafka's ReplicaManager.lastOffsetForLeaderEpoch always asks for the
// leader, the debugging id -2 included.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetForLeaderEpoch, 0, 4, handleOffsetForLeaderEpoch) }

func handleOffsetForLeaderEpoch(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	// CLUSTER_ACTION (brokers), or DESCRIBE on each topic, whatever the
	// replica id (Kafka's rule).
	clusterOK := b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		ts := b.topic(rt.Topic)
		authorized := clusterOK || b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			if !authorized {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if ts == nil || rp.Partition < 0 || int(rp.Partition) >= len(ts.partitions) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p := ts.partitions[rp.Partition]
			if p == nil {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			epoch := p.LeaderEpoch()
			current := int32(-1)
			if r.hdr.APIVersion >= 2 {
				current = rp.CurrentLeaderEpoch
			}
			switch {
			case current != -1 && current < epoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case current > epoch:
				sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
			case !p.IsLeader():
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				sp.LeaderEpoch, sp.EndOffset = p.Log.EndOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	r.respond(resp)
}
