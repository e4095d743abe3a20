package verifiable

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

// fakeClock starts at a fixed instant and moves 1 ms each time it is read,
// so that every timestamp and the average throughput are fixed.
func fakeClock() func() time.Time {
	t := time.UnixMilli(1700000000000)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// fakeSender acknowledges each record as it is produced: partition
// n%2, offset n/2, except the records whose value is in fail, which fail
// with NOT_ENOUGH_REPLICAS.
type fakeSender struct {
	n       int64
	fail    map[string]bool
	flushed bool
	closed  bool
}

func (f *fakeSender) Produce(_ context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	n := f.n
	f.n++
	if f.fail[string(r.Value)] {
		promise(r, kerr.NotEnoughReplicas)
		return
	}
	r.Partition, r.Offset = int32(n%2), n/2
	promise(r, nil)
}
func (f *fakeSender) Flush(context.Context) error { f.flushed = true; return nil }
func (f *fakeSender) Close()                      { f.closed = true }

// TestProducerLinesGolden checks every producer event's JSON: field names
// and order as Kafka's, null keys, Java's double in tool_data.
func TestProducerLinesGolden(t *testing.T) {
	o, err := parseProducerOptions([]string{"--topic", "t1", "--bootstrap-server", "127.0.0.1:9", "--max-messages", "5",
		"--value-prefix", "7", "--repeating-keys", "2", "--message-create-time", "1600000000000"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.props["acks"] != "-1" || o.props["retries"] != "0" || o.props["enable.idempotence"] != "false" {
		t.Errorf("producer props %v: want acks -1, retries 0, no idempotence", o.props)
	}
	var out bytes.Buffer
	f := &fakeSender{fail: map[string]bool{"7.3": true}}
	if err := runProducer(context.Background(), f, o, newPrinter(&out, fakeClock())); err != nil {
		t.Fatal(err)
	}
	if !f.flushed || !f.closed {
		t.Errorf("producer not flushed (%v) and closed (%v) before shutdown_complete", f.flushed, f.closed)
	}
	// Without a key or prefix: "key":null, values 0, 1, ...
	o, err = parseProducerOptions([]string{"--topic", "t2", "--bootstrap-server", "127.0.0.1:9", "--max-messages", "2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runProducer(context.Background(), &fakeSender{}, o, newPrinter(&out, fakeClock())); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/producer-lines.golden", out.Bytes())
}

// TestConsumerLinesGolden checks the consumer's events: the summary of a
// poll cut at --max-messages, record_data with --verbose, commits with and
// without an error, assignments.
func TestConsumerLinesGolden(t *testing.T) {
	o, err := parseConsumerOptions([]string{"--topic", "t1", "--bootstrap-server", "127.0.0.1:9", "--group-id", "g",
		"--max-messages", "4", "--verbose"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &consumerRun{o: o, out: newPrinter(&out, fakeClock())}
	r.out.print(&startupComplete{named("startup_complete")})
	r.out.print(&partitionsEvent{header: named("partitions_assigned"), Partitions: sortedPartitions(map[string][]int32{"t1": {1, 0}})})
	recs := func(p int32, from, n int64) []*kgo.Record {
		var rs []*kgo.Record
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: "t1", Partition: p, Offset: from + i, Value: []byte("v<&>" + string(rune('a'+i)))})
		}
		rs[0].Key = []byte("k")
		return rs
	}
	offsets := r.onRecords([]partitionRecords{{"t1", 1, recs(1, 10, 3)}, {"t1", 0, recs(0, 0, 3)}})
	r.out.print(committedEvent(offsets, nil))
	r.out.print(committedEvent(offsets, kerr.RebalanceInProgress))
	if !r.finished() {
		t.Errorf("consumed %d of --max-messages 4, not finished", r.consumed)
	}
	r.out.print(&partitionsEvent{header: named("partitions_revoked"), Partitions: sortedPartitions(map[string][]int32{"t1": {0, 1}})})
	r.out.print(&shutdownComplete{named("shutdown_complete")})
	golden.Check(t, "testdata/consumer-lines.golden", out.Bytes())
}

func TestJavaException(t *testing.T) {
	for _, tc := range []struct {
		err         error
		class, text string
	}{
		{kerr.NotLeaderForPartition, "class org.apache.kafka.common.errors.NotLeaderOrFollowerException", kerr.NotLeaderForPartition.Description},
		{kerr.MessageTooLarge, "class org.apache.kafka.common.errors.RecordTooLargeException", kerr.MessageTooLarge.Description},
		{kgo.ErrRecordTimeout, "class org.apache.kafka.common.errors.TimeoutException", kgo.ErrRecordTimeout.Error()},
		{errors.New("boom"), "class org.apache.kafka.common.errors.KafkaException", "boom"},
	} {
		class, text := javaException(tc.err)
		if class != tc.class || text != tc.text {
			t.Errorf("javaException(%v) = %q, %q; want %q, %q", tc.err, class, text, tc.class, tc.text)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t"}, "bootstrap-server"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--acks", "2"}, "acks"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--repeating-keys", "0"}, "repeating-keys"},
	} {
		if _, err := parseProducerOptions(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("producer %q: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap-server", "h:1", "--topic", "t"}, "group-id"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--group-id", "g", "--group-protocol", "share"}, "group-protocol"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--group-id", "g", "--group-protocol", "consumer", "--group-remote-assignor", "x"}, "remote assignor"},
	} {
		if _, err := parseConsumerOptions(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("consumer %q: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
	o, err := parseConsumerOptions([]string{"--bootstrap-server", "h:1", "--topic", "t", "--group-id", "g", "--group-protocol", "CONSUMER"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.groupOpts) == 0 || o.props["session.timeout.ms"] != "" || o.props["partition.assignment.strategy"] != "" {
		t.Errorf("consumer protocol: group opts %d, props %v", len(o.groupOpts), o.props)
	}
}

// cancellingSender cancels the run when the record numbered at is
// produced, as SIGTERM would.
type cancellingSender struct {
	fakeSender
	at     int64
	cancel context.CancelFunc
}

func (c *cancellingSender) Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	if c.n == c.at {
		c.cancel()
	}
	c.fakeSender.Produce(ctx, r, promise)
}

// TestProducerStopped checks Kafka's shutdown hook: a run stopped while
// throttled (--throughput 0 sends one record and waits) still flushes and
// prints shutdown_complete and tool_data counting what was sent.
func TestProducerStopped(t *testing.T) {
	o, err := parseProducerOptions([]string{"--topic", "t", "--bootstrap-server", "127.0.0.1:9", "--throughput", "0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &cancellingSender{at: 1, cancel: cancel}
	var out bytes.Buffer
	if err := runProducer(ctx, f, o, newPrinter(&out, fakeClock())); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !f.flushed || !strings.Contains(lines[len(lines)-2], `"name":"shutdown_complete"`) ||
		!strings.Contains(last, `"name":"tool_data","sent":2,"acked":2,"target_throughput":0,`) {
		t.Errorf("stopped run printed:\n%s", out.String())
	}
}

func TestThrottler(t *testing.T) {
	start := time.UnixMilli(0)
	th := throttler{target: 100, start: start}
	if th.shouldThrottle(10, start) {
		t.Error("throttled at elapsed 0")
	}
	if !th.shouldThrottle(11, start.Add(100*time.Millisecond)) {
		t.Error("11 records in 100 ms at 100/s not throttled")
	}
	if th.shouldThrottle(10, start.Add(100*time.Millisecond)) {
		t.Error("10 records in 100 ms at 100/s throttled")
	}
	if (&throttler{target: -1, start: start}).shouldThrottle(1e9, start.Add(time.Millisecond)) {
		t.Error("throughput -1 throttled")
	}
}
