package broker

// OffsetForLeaderEpoch: v0-4
//
// For each partition, the largest leader epoch at or below the requested
// one and the offset where it ends (the start of the next epoch, or the
// log end offset for the latest), from the log's leader epoch cache, as
// Kafka's Partition.lastOffsetForLeaderEpoch; -1, -1 without error when
// the epoch is older than every epoch the log knows. A CurrentLeaderEpoch
// (v2+, -1 = unchecked) older than the partition's is FENCED_LEADER_EPOCH,
// a newer one UNKNOWN_LEADER_EPOCH. ReplicaID (v3+): followers (>= 0) and
// consumers (-1) must ask the leader, NOT_LEADER_OR_FOLLOWER otherwise;
// the debugging id -2 may ask any replica.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.OffsetForLeaderEpoch, 0, 4, handleOffsetForLeaderEpoch) }

// debuggingReplicaID is Kafka's replica id for tools that may read any replica.
const debuggingReplicaID = -2

func handleOffsetForLeaderEpoch(b *Broker, r *request) {
	req := r.kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	replicaID := int32(-1)
	if r.hdr.APIVersion >= 3 {
		replicaID = req.ReplicaID
	}
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
			case current >= 0 && current < epoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case current > epoch:
				sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
			case replicaID != debuggingReplicaID && !p.IsLeader():
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
