package broker

// ListPartitionReassignments: v0
//
// Lists the reassignments in progress (KIP-455) from this broker's latest
// metadata image: for each partition being reassigned, its replica set
// (target and removing replicas), AddingReplicas and RemovingReplicas. A
// null topic list means every topic; named topics and partitions that do
// not exist or are not being reassigned are left out, as Kafka's
// controller does. A topic appears only with at least one partition. On a
// single node nothing is ever in progress, so the list is empty.
//
// Deviation: Kafka asks the active controller; this broker answers from
// its own image, which may trail the controller's by the time it takes to
// apply the latest records.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.ListPartitionReassignments, 0, 0, handleListPartitionReassignments) }

func handleListPartitionReassignments(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	im := b.meta.Image()
	if !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	if req.Topics == nil {
		for _, name := range im.SortedTopics() {
			t := im.Topics[name]
			var parts []int32
			for _, p := range t.Partitions {
				parts = append(parts, p.Partition)
			}
			appendReassigning(resp, t, parts)
		}
	} else {
		for _, rt := range req.Topics {
			if t := im.Topics[rt.Topic]; t != nil {
				appendReassigning(resp, t, rt.Partitions)
			}
		}
	}
	r.respond(resp)
}

// appendReassigning adds to resp those of t's partitions that are being
// reassigned.
func appendReassigning(resp *kmsg.ListPartitionReassignmentsResponse, t *metadata.Topic, partitions []int32) {
	st := kmsg.NewListPartitionReassignmentsResponseTopic()
	st.Topic = t.Name
	for _, i := range partitions {
		if i < 0 || int(i) >= len(t.Partitions) {
			continue
		}
		p := t.Partitions[i]
		if len(p.AddingReplicas) == 0 && len(p.RemovingReplicas) == 0 {
			continue
		}
		sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		sp.Partition = p.Partition
		sp.Replicas = slices.Clone(p.Replicas)
		sp.AddingReplicas = nonNil(p.AddingReplicas)
		sp.RemovingReplicas = nonNil(p.RemovingReplicas)
		st.Partitions = append(st.Partitions, sp)
	}
	if len(st.Partitions) > 0 {
		resp.Topics = append(resp.Topics, st)
	}
}

// nonNil returns a copy of s that is never nil, for arrays the protocol
// does not allow to be null.
func nonNil(s []int32) []int32 {
	return append([]int32{}, s...)
}
