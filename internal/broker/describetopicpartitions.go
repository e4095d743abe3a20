package broker

// DescribeTopicPartitions: v0
//
// KIP-966's paged topic description, as Kafka's
// DescribeTopicPartitionsRequestHandler: the named topics (or, for an
// empty list, all topics) at or after the cursor's topic, in name order,
// with at most max(min(ResponsePartitionLimit, 2000), 1) partitions in
// all (2000 is max.request.partition.size.limit's default); the cursor's
// topic starts at the cursor's partition. When the limit stops a topic
// part-way, NextCursor names the first partition left out; when it is
// reached at a topic boundary, NextCursor names the next topic, partition
// 0. Authorization is Metadata's: DESCRIBE on each topic; with all topics
// asked the others are left out, and a named one answers
// TOPIC_AUTHORIZATION_FAILED with a zero id, listed after the others (as
// Kafka, only those met before the page ends). A
// named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (or
// INVALID_TOPIC_EXCEPTION for an invalid name). Each described topic
// carries its authorized operations. A cursor whose topic is not in a
// non-empty list, or whose partition is negative, makes the whole request
// INVALID_REQUEST (every named topic answers it).
//
// Partitions list the replicas and ISR as they are, the offline replicas
// (fenced or unregistered brokers), and, as the metadata keeps no eligible
// leader replicas (KIP-966 ELR), empty EligibleLeaderReplicas and
// LastKnownELR.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.DescribeTopicPartitions, 0, 0, handleDescribeTopicPartitions) }

// maxRequestPartitionSizeLimit is max.request.partition.size.limit's
// default.
const maxRequestPartitionSizeLimit = 2000

func handleDescribeTopicPartitions(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	im := b.meta.Image()

	fetchAll := len(req.Topics) == 0
	cursorTopic := ""
	if req.Cursor != nil {
		cursorTopic = req.Cursor.Topic
	}
	var names []string
	if fetchAll {
		for _, n := range im.SortedTopics() {
			if n >= cursorTopic {
				names = append(names, n)
			}
		}
	} else {
		for _, t := range req.Topics {
			if t.Topic >= cursorTopic {
				names = append(names, t.Topic)
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	if req.Cursor != nil && (req.Cursor.Partition < 0 || !fetchAll && !slices.Contains(names, cursorTopic)) {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			name := t.Topic
			rt.Topic = &name
			rt.ErrorCode = kerr.InvalidRequest.Code
			rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
			resp.Topics = append(resp.Topics, rt)
		}
		r.respond(resp)
		return
	}

	var unauthorized []kmsg.DescribeTopicPartitionsResponseTopic
	remaining := int(max(min(maxRequestPartitionSizeLimit, req.ResponsePartitionLimit), 1))
	for _, name := range names {
		if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name) {
			if !fetchAll {
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				n := name
				rt.Topic = &n
				rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
				unauthorized = append(unauthorized, rt)
			}
			continue
		}
		if remaining == 0 {
			// The limit fell on a topic boundary: the next page starts
			// with this topic (which may not exist).
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		t := im.Topics[name]
		if t == nil {
			if fetchAll {
				continue
			}
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			n := name
			rt.Topic = &n
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if validateTopicName(name) != nil {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			rt.IsInternal = isInternalTopic(name)
			rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
			rt.AuthorizedOperations = b.authorizedOperations(r, true, kmsg.ACLResourceTypeTopic, name)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		start := 0
		if name == cursorTopic && req.Cursor != nil {
			start = int(req.Cursor.Partition)
		}
		rt, next := describeTopicPartitions(im, t, start, remaining)
		rt.AuthorizedOperations = b.authorizedOperations(r, true, kmsg.ACLResourceTypeTopic, name)
		resp.Topics = append(resp.Topics, rt)
		remaining -= len(rt.Partitions)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: int32(next)}
			break
		}
	}
	resp.Topics = append(resp.Topics, unauthorized...)
	r.respond(resp)
}

// describeTopicPartitions describes at most limit partitions of t from
// start on, and returns the first partition left out, or -1.
func describeTopicPartitions(im *metadata.Image, t *metadata.Topic, start, limit int) (kmsg.DescribeTopicPartitionsResponseTopic, int) {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	name := t.Name
	rt.Topic = &name
	rt.TopicID = t.ID
	rt.IsInternal = isInternalTopic(t.Name)
	rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	upper := min(len(t.Partitions), start+limit)
	next := -1
	if upper < len(t.Partitions) {
		next = upper
	}
	for i := start; i < upper; i++ {
		p := t.Partitions[i]
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition = p.Partition
		rp.LeaderID = p.Leader
		rp.LeaderEpoch = p.LeaderEpoch
		rp.Replicas = slices.Clone(p.Replicas)
		rp.ISR = slices.Clone(p.ISR)
		rp.EligibleLeaderReplicas = []int32{}
		rp.LastKnownELR = []int32{}
		rp.OfflineReplicas = []int32{}
		for _, id := range p.Replicas {
			if br := im.BrokerByID(id); br == nil || br.Fenced {
				rp.OfflineReplicas = append(rp.OfflineReplicas, id)
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt, next
}
