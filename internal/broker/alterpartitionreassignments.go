package broker

// AlterPartitionReassignments: v0-1
//
// KIP-455, as KRaft's controller: each partition's Replicas becomes its
// target replica set; the new replicas start following at once and the
// old ones are removed when every new one has joined the ISR (the leader
// asks for that with AlterPartition once they caught up). Null Replicas
// cancels a reassignment in progress (NO_REASSIGNMENT_IN_PROGRESS when
// there is none). A target that is empty, repeats a broker or names an
// unregistered one is INVALID_REPLICA_ASSIGNMENT with Kafka's messages; an
// unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION. From v1, with
// AllowReplicationFactorChange false, a target of another size than the
// current replica set is INVALID_REPLICATION_FACTOR. A failure of the
// whole request (NOT_CONTROLLER when no controller answers) is the
// top-level ErrorCode and every partition's.
//
// On a single node the only valid target is the current replica set (a
// no-op); other brokers are not registered.
//
// Deviation: TimeoutMillis is ignored; the response is sent once the
// controller committed the change.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.AlterPartitionAssignments, 0, 1, handleAlterPartitionReassignments) }

func handleAlterPartitionReassignments(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	allowRFChange := r.hdr.APIVersion < 1 || req.AllowReplicationFactorChange
	resp.AllowReplicationFactorChange = allowRFChange
	im := b.meta.Image()
	if !b.authorizeCluster(r, kmsg.ACLOperationAlter) {
		// Kafka's error response names every partition with the error.
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = errMessage(errClusterAuthorization)
		for _, rt := range req.Topics {
			st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				sp.Partition, sp.ErrorCode, sp.ErrorMessage = rp.Partition, resp.ErrorCode, resp.ErrorMessage
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		r.respond(resp)
		return
	}

	// Validate each partition; the valid ones go to the controller in one
	// request, their results written back through slot.
	type slot struct{ topic, part int }
	var (
		reassign []metadata.Reassignment
		slots    []slot
	)
	for ti, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			if e := checkReassignment(im, rt.Topic, rp.Partition, rp.Replicas, allowRFChange); e != nil {
				sp.ErrorCode = e.errorCode()
				sp.ErrorMessage = e.messagePtr()
			} else {
				reassign = append(reassign, metadata.Reassignment{Topic: rt.Topic, Partition: rp.Partition, Replicas: rp.Replicas})
				slots = append(slots, slot{ti, pi})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(reassign) == 0 {
		r.respond(resp)
		return
	}
	results, err := b.ops().ReassignPartitions(reassign)
	if err == nil && len(results) != len(reassign) {
		err = fmt.Errorf("controller answered %d results for %d partitions", len(results), len(reassign))
	}
	if err != nil {
		b.log.Warn("alter partition reassignments", "err", err)
		resp.ErrorCode = clusterErrorCode(err)
		resp.ErrorMessage = errMessage(err)
		for _, s := range slots {
			sp := &resp.Topics[s.topic].Partitions[s.part]
			sp.ErrorCode, sp.ErrorMessage = resp.ErrorCode, errMessage(err)
		}
		r.respond(resp)
		return
	}
	for i, s := range slots {
		sp := &resp.Topics[s.topic].Partitions[s.part]
		sp.ErrorCode = clusterErrorCode(results[i].Err)
		sp.ErrorMessage = errMessage(results[i].Err)
		if results[i].Err == nil {
			b.log.Info("partition reassignment", "partition", fmt.Sprintf("%s-%d", results[i].Topic, results[i].Partition),
				"replicas", reassign[i].Replicas)
		}
	}
	r.respond(resp)
}

// checkReassignment applies the checks Kafka makes before it changes
// anything: the partition exists and the target is a valid replica list.
func checkReassignment(im *metadata.Image, topic string, partition int32, replicas []int32, allowRFChange bool) *apiError {
	p, err := imagePartition(im, topic, partition)
	if err != nil {
		return newAPIError(kerr.UnknownTopicOrPartition, "Unable to find partition %s-%d.", topic, partition)
	}
	if replicas == nil {
		return nil // a cancellation; the controller knows whether one is in progress
	}
	for _, id := range replicas {
		if id < 0 {
			return newAPIError(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes an invalid broker id %d.", id)
		}
	}
	if e := checkManualAssignment(im, replicas, -1); e != nil {
		return e
	}
	if !allowRFChange {
		current := len(p.Replicas) - len(p.AddingReplicas)
		if len(replicas) != current {
			return newAPIError(kerr.InvalidReplicationFactor,
				"The replication factor is changed from %d to %d, but AllowReplicationFactorChange is false.",
				current, len(replicas))
		}
	}
	return nil
}
