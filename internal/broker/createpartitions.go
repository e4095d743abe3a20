package broker

// CreatePartitions: v0-3
//
// As Kafka's controller: the count must grow (INVALID_PARTITIONS, "The
// topic t currently has 3 partition(s); 2 would not be an increase." or
// "Topic already has 3 partition(s)."); a manual Assignment must give one
// replica list per new partition, with the topic's replica count, naming
// registered brokers only (here: this broker); a topic repeated in one
// request gets INVALID_REQUEST; an unknown topic gets
// UNKNOWN_TOPIC_OR_PARTITION with no message. ValidateOnly runs every
// check and changes nothing.
//
// Deviation: TimeoutMillis is ignored; the new partitions exist when the
// response is sent.

import (
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
			e = newAPIError(kerr.TopicAuthorizationFailed, "%s", kerr.TopicAuthorizationFailed.Message)
		} else if e = recordMutations(mq, newPartitions(b.meta.Image(), rt)); e == nil {
			e = b.createPartitions(rt, req.ValidateOnly)
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

func (b *Broker) createPartitions(rt *kmsg.CreatePartitionsRequestTopic, validateOnly bool) *apiError {
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
	if rt.Assignment != nil {
		add := int(rt.Count - current)
		if len(rt.Assignment) != add {
			return newAPIError(kerr.InvalidReplicaAssignment,
				"Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(rt.Assignment))
		}
		rf := -1
		if current > 0 {
			rf = len(t.Partitions[0].Replicas)
		}
		for _, a := range rt.Assignment {
			if e := checkManualAssignment(im, a.Replicas, rf); e != nil {
				return e
			}
		}
	}
	if validateOnly {
		return nil
	}
	if err := b.meta.CreatePartitions(rt.Topic, rt.Count); err != nil {
		b.log.Warn("create partitions", "topic", rt.Topic, "err", err)
		return toAPIError(err)
	}
	return nil
}

// newPartitions is how many partitions a request adds to its topic (0 when
// it adds none or the topic is unknown), for the mutation quota.
func newPartitions(im *metadata.Image, rt *kmsg.CreatePartitionsRequestTopic) int {
	if t := im.Topics[rt.Topic]; t != nil && int(rt.Count) > len(t.Partitions) {
		return int(rt.Count) - len(t.Partitions)
	}
	return 0
}
