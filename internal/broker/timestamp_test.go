package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// A CreateTime topic refuses records outside message.timestamp.before.max.ms
// and after.max.ms (1 hour ahead by default since Kafka 4.0) with
// INVALID_TIMESTAMP, naming each record as Kafka's LogValidator does.
func TestProduceTimestampWindow(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "ts", 1, nil)
	minute := "60000"
	tb.createTopic(ctx, "recent", 1, map[string]*string{"message.timestamp.before.max.ms": &minute})
	appendTime := "LogAppendTime"
	tb.createTopic(ctx, "appended", 1, map[string]*string{"message.timestamp.type": &appendTime})

	now := time.Now()
	for _, tc := range []struct {
		topic string
		ts    time.Time
		want  error
	}{
		{"ts", now.Add(30 * time.Minute), nil},
		{"ts", now.Add(2 * time.Hour), kerr.InvalidTimestamp},
		{"ts", now.Add(-365 * 24 * time.Hour), nil}, // before.max.ms: unlimited by default
		{"recent", now.Add(-2 * time.Minute), kerr.InvalidTimestamp},
		{"recent", now.Add(-10 * time.Second), nil},
		{"appended", now.Add(2 * time.Hour), nil}, // LogAppendTime: the broker's clock
	} {
		err := tb.cl.ProduceSync(ctx, &kgo.Record{Topic: tc.topic, Value: []byte("v"), Timestamp: tc.ts}).FirstErr()
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("%s, timestamp %v from now: %v, want %v", tc.topic, tc.ts.Sub(now).Round(time.Second), err, tc.want)
		}
	}

	// Record errors name each record out of range (Produce v8+, KIP-467).
	ms := now.UnixMilli()
	batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: ms, ProducerID: -1, BaseSequence: -1, PartitionLeaderEpoch: -1},
		[]record.Record{{Value: []byte("a")}, {TimestampDelta: int64(3 * time.Hour / time.Millisecond), Value: []byte("b")}, {Value: []byte("c")}})
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = "ts", tb.b.topic("ts").id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := tb.request(ctx, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.InvalidTimestamp.Code || p.BaseOffset != -1 {
		t.Fatalf("batch with a record 3 h ahead: error %v, base offset %d; want INVALID_TIMESTAMP, -1", kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
	}
	if len(p.ErrorRecords) != 1 || p.ErrorRecords[0].RelativeOffset != 1 || p.ErrorRecords[0].ErrorMessage == nil ||
		!strings.Contains(*p.ErrorRecords[0].ErrorMessage, "of message with offset 1 is out of range") {
		t.Errorf("record errors %+v, want one for batch index 1", p.ErrorRecords)
	}
	if p.ErrorMessage == nil || *p.ErrorMessage != "One or more records have been rejected due to invalid timestamp" {
		t.Errorf("error message %v", p.ErrorMessage)
	}
}
