package broker

// DeleteRecords: v0-2
//
// Moves a partition's log start offset up to the requested offset (-1:
// the high watermark), as Kafka's Partition.deleteRecordsOnLeader: an
// internal topic (__consumer_offsets, __transaction_state) is
// INVALID_TOPIC_EXCEPTION, as ReplicaManager.deleteRecordsOnLocalLog; an
// offset above the high watermark, or negative other than -1, is
// OFFSET_OUT_OF_RANGE; a topic whose cleanup.policy lacks "delete" gets
// POLICY_VIOLATION; an offset at or below the current log start offset
// changes nothing. Segments wholly below the new log start offset are
// deleted by the log. As Kafka's DelayedDeleteRecords, the answer waits
// (up to TimeoutMillis, off the io goroutines) until the low watermark, the
// smallest log start offset of the leader and its in-sync followers (they
// follow the leader's log start offset and report theirs in every fetch),
// reaches the requested offset; LowWatermark is that low watermark, and a
// partition still short of it at the timeout gets REQUEST_TIMED_OUT.
//
// Deviation: Kafka counts the followers on live brokers, in sync or not;
// we count the in-sync ones.

import (
	"slices"
	"time"

	"github.com/silkworm/silkworm/internal/partition"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DeleteRecords, 0, 2, handleDeleteRecords) }

func handleDeleteRecords(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	var waits []lowWatermarkWait
	for ti, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		ts := b.topic(rt.Topic)
		authorized := b.authorize(r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			if !authorized {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if isInternalTopic(rt.Topic) {
				// ReplicaManager.deleteRecordsOnLocalLog refuses internal
				// topics that exist before looking at the partition.
				if _, err := imagePartition(b.meta.Image(), rt.Topic, rp.Partition); err == nil {
					sp.ErrorCode = kerr.InvalidTopicException.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
			}
			low, code := b.deleteRecords(ts, rp.Partition, rp.Offset)
			if code == 0 {
				sp.LowWatermark = low
				if p := ts.partitions[rp.Partition]; p.LowWatermark() < low {
					waits = append(waits, lowWatermarkWait{p: p, offset: low, topic: ti, part: len(st.Partitions)})
				}
			}
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(waits) == 0 {
		r.respond(resp)
		return
	}
	go waitLowWatermarks(r, resp, waits, time.Duration(req.TimeoutMillis)*time.Millisecond-time.Since(r.received))
}

// lowWatermarkWait is a partition whose followers must still delete up to
// offset; topic and part index its answer in the response.
type lowWatermarkWait struct {
	p           *partition.Partition
	offset      int64
	topic, part int
}

// waitLowWatermarks answers r once every partition's low watermark
// reached its offset, or at the timeout (REQUEST_TIMED_OUT for those that
// did not).
func waitLowWatermarks(r *request, resp *kmsg.DeleteRecordsResponse, waits []lowWatermarkWait, timeout time.Duration) {
	wake := make(chan struct{}, 1)
	for _, w := range waits {
		w.p.Watch(wake)
		defer w.p.Unwatch(wake)
	}
	timer := time.NewTimer(max(timeout, 0))
	defer timer.Stop()
	for {
		done := true
		for _, w := range waits {
			done = done && w.p.LowWatermark() >= w.offset
		}
		if done {
			break
		}
		select {
		case <-wake:
			continue
		case <-timer.C:
		}
		break
	}
	for _, w := range waits {
		sp := &resp.Topics[w.topic].Partitions[w.part]
		if low := w.p.LowWatermark(); low >= w.offset {
			sp.LowWatermark = low
		} else {
			sp.LowWatermark, sp.ErrorCode = -1, kerr.RequestTimedOut.Code
		}
	}
	r.respond(resp)
}

// deleteRecords advances one partition's log start offset and returns the
// new low watermark, or a Kafka error code.
func (b *Broker) deleteRecords(ts *topicState, index int32, offset int64) (int64, int16) {
	if ts == nil || index < 0 || int(index) >= len(ts.partitions) {
		return -1, kerr.UnknownTopicOrPartition.Code
	}
	p := ts.partitions[index]
	if !p.IsLeader() {
		return -1, kerr.NotLeaderForPartition.Code
	}
	if !slices.Contains(ts.cfg.CleanupPolicy, "delete") {
		return -1, kerr.PolicyViolation.Code
	}
	hw := p.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, kerr.OffsetOutOfRange.Code
	}
	if offset <= p.Log.LogStartOffset() {
		return p.Log.LogStartOffset(), 0
	}
	low, err := p.Log.DeleteRecordsBefore(offset)
	if err != nil {
		b.log.Warn("delete records", "partition", p.String(), "offset", offset, "err", err)
		return -1, errorCode(err)
	}
	return low, 0
}
