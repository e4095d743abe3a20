package broker

// CreatePartitions: v0-3
//
// As Kafka's controller: the count must grow (INVALID_PARTITIONS, "The
// topic t currently has 3 partition(s); 2 would not be an increase." or
// "Topic already has 3 partition(s)."); a manual Assignment must give one
// replica list per new partition, with the topic's replica count, naming
// registered brokers only, at least one of them active, and the new
// partitions then get exactly those replicas, the first being the
// preferred leader; a topic repeated in one request gets INVALID_REQUEST;
// an unauthorized one TOPIC_AUTHORIZATION_FAILED and an unknown one
// UNKNOWN_TOPIC_OR_PARTITION, both with no message. The mutation quota is
// charged after the count checks, as Kafka. ValidateOnly runs every check
// and changes nothing.
//
// Deviation: TimeoutMillis is ignored; the new partitions exist when the
// response is sent.

import (
	"errors"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/quota"
)

func init() { register(kmsg.CreatePartitions, 0, 3, handleCreatePartitions) }

func handleCreatePartitions(b *Broker, r *request) {
	req := r.kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	reported := map[string]bool{}
	if b.createPartitionsRecords(r, req, seen) > maxRecordsPerUserOp {
		for _, rt := range req.Topics {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = errExcessivelyLargeBatch.code
			st.ErrorMessage = errExcessivelyLargeBatch.messagePtr()
			resp.Topics = append(resp.Topics, st)
		}
		r.respond(resp)
		return
	}
	mq := b.mutationQuota(r, quota.StrictSinceCreatePartitions)
	for i := range req.Topics {
		rt := &req.Topics[i]
		var e *apiError
		if seen[rt.Topic] > 1 {
			if reported[rt.Topic] {
				continue
			}
			reported[rt.Topic] = true
			e = newAPIError(kerr.InvalidRequest, "Duplicate topic name.")
		} else if !b.authorize(r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeTopic, rt.Topic) {
			e = &apiError{code: kerr.TopicAuthorizationFailed.Code} // Kafka sets no message
		} else {
			e = b.createPartitions(rt, mq, req.ValidateOnly)
		}
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		st.ErrorCode = e.errorCode()
		st.ErrorMessage = e.messagePtr()
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = r.mutationThrottle(mq)
	r.respond(resp)
}

// createPartitionsRecords counts the PartitionRecords the request would
// produce (see maxRecordsPerUserOp): the new partitions of each topic that
// exists, grows and is named once, and that the principal may alter.
func (b *Broker) createPartitionsRecords(r *request, req *kmsg.CreatePartitionsRequest, seen map[string]int) int64 {
	im := b.meta.Image()
	var n int64
	for _, rt := range req.Topics {
		t := im.Topics[rt.Topic]
		if t == nil || seen[rt.Topic] > 1 || int(rt.Count) <= len(t.Partitions) {
			continue
		}
		if !b.authorize(r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeTopic, rt.Topic) {
			continue
		}
		n += int64(rt.Count) - int64(len(t.Partitions))
	}
	return n
}

// createPartitions checks one topic of a CreatePartitions request in the
// order of Kafka's ReplicationControlManager.createPartitions (topic,
// count, number of assignments, mutation quota mq, then each assignment)
// and, unless validateOnly, adds the partitions.
func (b *Broker) createPartitions(rt *kmsg.CreatePartitionsRequestTopic, mq *quota.MutationQuota, validateOnly bool) *apiError {
	im := b.meta.Image()
	t := im.Topics[rt.Topic]
	if t == nil {
		return &apiError{code: kerr.UnknownTopicOrPartition.Code}
	}
	current := int32(len(t.Partitions))
	switch {
	case rt.Count < current:
		return newAPIError(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.",
			rt.Topic, current, rt.Count)
	case rt.Count == current:
		return newAPIError(kerr.InvalidPartitions, "Topic already has %d partition(s).", current)
	}
	add := int(rt.Count - current)
	if rt.Assignment != nil && len(rt.Assignment) != add {
		return newAPIError(kerr.InvalidReplicaAssignment,
			"Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(rt.Assignment))
	}
	if e := recordMutations(mq, add); e != nil {
		return e
	}
	if rt.Assignment != nil {
		rf := -1
		if current > 0 {
			rf = len(t.Partitions[0].Replicas) - len(t.Partitions[0].AddingReplicas)
		}
		for i, a := range rt.Assignment {
			if e := checkManualAssignment(im, a.Replicas, rf); e != nil {
				return e
			}
			if !slices.ContainsFunc(a.Replicas, func(id int32) bool { return brokerActive(im, id) }) {
				return newAPIError(kerr.InvalidReplicaAssignment,
					"All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.",
					int(current)+i)
			}
		}
	}
	if validateOnly {
		return nil
	}
	var err error
	if rt.Assignment != nil {
		assignment := make([][]int32, len(rt.Assignment))
		for i, a := range rt.Assignment {
			assignment[i] = slices.Clone(a.Replicas)
		}
		err = b.meta.CreatePartitionsWithAssignment(rt.Topic, rt.Count, assignment)
	} else {
		err = b.meta.CreatePartitions(rt.Topic, rt.Count)
	}
	if err != nil {
		b.log.Warn("create partitions", "topic", rt.Topic, "err", err)
		if errors.Is(err, metadata.ErrInvalidReplicaAssignment) {
			// The controller's check raced a fencing: its message is Kafka's.
			msg := strings.TrimPrefix(err.Error(), metadata.ErrInvalidReplicaAssignment.Error()+": ")
			return newAPIError(kerr.InvalidReplicaAssignment, "%s", msg)
		}
		return toAPIError(err)
	}
	return nil
}
