package interop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

const (
	numRecords    = 10000
	numPartitions = 3
	// clientTimeout bounds one client run (produce or consume); a hang
	// guard only.
	clientTimeout = 3 * time.Minute
)

// header is one record header.
type header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// record is what a client read back.
type record struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Headers   []header
	Timestamp int64 // milliseconds since the epoch
}

func (r record) String() string {
	return fmt.Sprintf("p%d@%d key=%q value=%q headers=%v ts=%d", r.Partition, r.Offset, r.Key, r.Value, r.Headers, r.Timestamp)
}

// outRecord is what a client is asked to produce, in this order.
type outRecord struct {
	Key     string   `json:"key"`
	Value   string   `json:"value"`
	Headers []header `json:"headers"`
}

// client is one Kafka client under test. produce and consume run it to
// completion; consume reads every partition of the topic from its start to
// the high watermark seen when it began.
type client interface {
	name() string
	// headers returns the headers the client attaches to record seq.
	headers(seq int) []header
	produce(ctx context.Context, t *testing.T, addr, topic string, recs []outRecord) error
	consume(ctx context.Context, t *testing.T, addr, topic string) ([]record, error)
}

// perRecordHeaders is the header scheme of clients that can set headers per
// record: one or two headers, varying with the sequence number.
func perRecordHeaders(clientName string) func(int) []header {
	return func(seq int) []header {
		hs := []header{{"seq", strconv.Itoa(seq)}}
		if seq%2 == 0 {
			hs = append(hs, header{"client", clientName})
		}
		return hs
	}
}

// makeRecords returns the records c produces: distinct keys k-000000.. and
// values that carry the sequence number and vary in length.
func makeRecords(c client) []outRecord {
	recs := make([]outRecord, numRecords)
	for i := range recs {
		recs[i] = outRecord{
			Key:     fmt.Sprintf("k-%06d", i),
			Value:   fmt.Sprintf("v-%06d-%s-%s", i, c.name(), strings.Repeat("x", i%53)),
			Headers: c.headers(i),
		}
	}
	return recs
}

// seqOfKey parses the sequence number out of a k-NNNNNN key.
func seqOfKey(key string) (int, bool) {
	n, ok := strings.CutPrefix(key, "k-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.Atoi(n)
	return seq, err == nil && seq >= 0 && seq < numRecords
}

// verify checks that got is exactly want, read back in order: every record
// once, with its value, headers and a timestamp inside [from, to]; offsets
// per partition contiguous from 0 and increasing in the order read; produce
// order kept within each partition; every partition used.
func verify(t *testing.T, want []outRecord, got []record, from, to time.Time) {
	t.Helper()
	if problems := check(want, got, from, to); len(problems) > 0 {
		t.Errorf("read back does not match what was produced:\n  %s", strings.Join(problems, "\n  "))
	}
}

// check returns what is wrong with got, as described for verify; at most
// about twenty problems.
func check(want []outRecord, got []record, from, to time.Time) []string {
	var problems []string
	report := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		} else if len(problems) == 20 {
			problems = append(problems, "...")
		}
	}
	if len(got) != len(want) {
		report("read %d records, want %d", len(got), len(want))
	}
	fromMs, toMs := from.UnixMilli(), to.UnixMilli()
	seen := make([]bool, len(want))
	nextOffset := map[int32]int64{}
	lastSeq := map[int32]int{}
	for _, r := range got {
		if r.Partition < 0 || r.Partition >= numPartitions {
			report("record in partition %d of a %d-partition topic: %v", r.Partition, numPartitions, r)
			continue
		}
		if r.Offset != nextOffset[r.Partition] {
			report("partition %d: offset %d, want %d: %v", r.Partition, r.Offset, nextOffset[r.Partition], r)
		}
		nextOffset[r.Partition] = r.Offset + 1
		seq, ok := seqOfKey(r.Key)
		if !ok {
			report("unexpected key: %v", r)
			continue
		}
		if seen[seq] {
			report("duplicate: %v", r)
			continue
		}
		seen[seq] = true
		if last, ok := lastSeq[r.Partition]; ok && seq <= last {
			report("partition %d: key %s after k-%06d: produce order lost", r.Partition, r.Key, last)
		}
		lastSeq[r.Partition] = seq
		w := want[seq]
		if r.Value != w.Value {
			report("key %s: value %q, want %q", r.Key, r.Value, w.Value)
		}
		if !slices.Equal(r.Headers, w.Headers) {
			report("key %s: headers %v, want %v", r.Key, r.Headers, w.Headers)
		}
		if r.Timestamp < fromMs || r.Timestamp > toMs {
			report("key %s: timestamp %d outside the produce window [%d, %d]", r.Key, r.Timestamp, fromMs, toMs)
		}
	}
	missing := 0
	for seq, ok := range seen {
		if !ok {
			if missing < 5 {
				report("missing: %s", want[seq].Key)
			}
			missing++
		}
	}
	if missing > 0 {
		report("%d records missing in total", missing)
	}
	for p := int32(0); p < numPartitions; p++ {
		if nextOffset[p] == 0 {
			report("partition %d got no records: keyed records should spread over all partitions", p)
		}
	}
	return problems
}

// sameRecords checks that two reads of a topic returned the same records.
func sameRecords(t *testing.T, what string, want, got []record) {
	t.Helper()
	if diffs := diffRecords(want, got); len(diffs) > 0 {
		t.Errorf("%s:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// diffRecords compares two reads by partition and offset; it returns the
// differences, at most about ten.
func diffRecords(want, got []record) []string {
	byPosition := func(a, b record) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return cmp.Compare(a.Offset, b.Offset)
	}
	want, got = slices.Clone(want), slices.Clone(got)
	slices.SortFunc(want, byPosition)
	slices.SortFunc(got, byPosition)
	var diffs []string
	if len(want) != len(got) {
		diffs = append(diffs, fmt.Sprintf("%d records, want %d", len(got), len(want)))
	}
	n := 0
	for i := range min(len(want), len(got)) {
		w, g := want[i], got[i]
		if w.Partition != g.Partition || w.Offset != g.Offset || w.Key != g.Key || w.Value != g.Value ||
			w.Timestamp != g.Timestamp || !slices.Equal(w.Headers, g.Headers) {
			if n < 10 {
				diffs = append(diffs, fmt.Sprintf("record %d:\n    got  %v\n    want %v", i, g, w))
			}
			n++
		}
	}
	if n > 0 {
		diffs = append(diffs, fmt.Sprintf("%d records differ", n))
	}
	return diffs
}

// runScenario runs the interop scenario for each client on b, each on its
// own topic: produce, read back with the client and with franz-go, verify;
// then, if b can restart, kill -9 it, restart it and read everything again.
func runScenario(t *testing.T, b broker, clients ...client) {
	t.Helper()
	firstRead := make(map[string][]record)
	topics := make(map[string]string)
	for _, c := range clients {
		t.Run(c.name(), func(t *testing.T) {
			topic := fmt.Sprintf("interop-%s-%d", c.name(), time.Now().UnixNano())
			createTopic(t, b.Addr(), topic)
			want := makeRecords(c)

			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			from := time.Now().Truncate(time.Millisecond)
			if err := c.produce(ctx, t, b.Addr(), topic, want); err != nil {
				t.Fatalf("%s produce: %v", c.name(), err)
			}
			to := time.Now()
			got, err := c.consume(ctx, t, b.Addr(), topic)
			if err != nil {
				t.Fatalf("%s consume: %v", c.name(), err)
			}
			verify(t, want, got, from, to)

			// A second, independent reader must see the same log.
			byKgo, err := kgoRead(ctx, b.Addr(), topic)
			if err != nil {
				t.Fatalf("franz-go read of %s's records: %v", c.name(), err)
			}
			sameRecords(t, "franz-go read vs "+c.name()+" read", got, byKgo)
			firstRead[c.name()] = got
			topics[c.name()] = topic
		})
	}
	if t.Failed() {
		return
	}
	if !b.CanRestart() {
		t.Log("broker cannot be restarted by this test (SILKWORM_TEST_BOOTSTRAP): skipping the kill -9 phase")
		return
	}
	b.Restart(t)
	for _, c := range clients {
		t.Run(c.name()+"-after-kill", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			waitTopicReady(t, b.Addr(), topics[c.name()])
			got, err := c.consume(ctx, t, b.Addr(), topics[c.name()])
			if err != nil {
				t.Fatalf("%s consume after restart: %v", c.name(), err)
			}
			sameRecords(t, c.name()+" read after kill -9 and restart", firstRead[c.name()], got)
		})
	}
}

func admin(t *testing.T, addr string) (*kadm.Client, func()) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatalf("franz-go client: %v", err)
	}
	return kadm.NewClient(cl), cl.Close
}

// createTopic creates a topic with numPartitions partitions, replication
// factor 1, and waits until its metadata shows every partition with a leader.
func createTopic(t *testing.T, addr, topic string) {
	t.Helper()
	adm, done := admin(t, addr)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, numPartitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	waitTopicReady(t, addr, topic)
}

// waitTopicReady waits until metadata shows every partition of topic with a
// leader.
func waitTopicReady(t *testing.T, addr, topic string) {
	t.Helper()
	adm, done := admin(t, addr)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	err := testcluster.Poll(brokerStartTimeout, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		td, ok := md.Topics[topic]
		if !ok || td.Err != nil {
			return fmt.Errorf("topic metadata: present=%v err=%v", ok, td.Err)
		}
		if len(td.Partitions) != numPartitions {
			return fmt.Errorf("%d partitions in metadata, want %d", len(td.Partitions), numPartitions)
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("partition %d: leader %d, err %v", p.Partition, p.Leader, p.Err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("topic %s not ready: %v", topic, err)
	}
}

// endOffsets returns the high watermark of each partition of topic.
func endOffsets(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	offs, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	if err := offs.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	ends := make(map[int32]int64)
	offs.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	if len(ends) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", topic)
	}
	return ends, nil
}

// kgoRead reads topic from the start to its current high watermarks with a
// franz-go direct (groupless) consumer.
func kgoRead(ctx context.Context, addr, topic string, opts ...kgo.Opt) ([]record, error) {
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := endOffsets(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	next := make(map[int32]int64)
	done := func() bool {
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	var recs []record
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return recs, fmt.Errorf("read %d records, positions %v, want %v: %w", len(recs), next, ends, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = errors.Join(ferr, err) })
		if ferr != nil {
			return recs, fmt.Errorf("fetch: %w", ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, fromKgo(r))
			next[r.Partition] = r.Offset + 1
		})
	}
	return recs, nil
}

func fromKgo(r *kgo.Record) record {
	hs := make([]header, 0, len(r.Headers))
	for _, h := range r.Headers {
		hs = append(hs, header{h.Key, string(h.Value)})
	}
	return record{
		Partition: r.Partition,
		Offset:    r.Offset,
		Key:       string(r.Key),
		Value:     string(r.Value),
		Headers:   hs,
		Timestamp: r.Timestamp.UnixMilli(),
	}
}

// requireClient skips the test, or under CI=true fails it, when a client is
// not installed. missing is nil when everything is there.
func requireClient(t *testing.T, missing error, install string) {
	t.Helper()
	if missing == nil {
		return
	}
	msg := fmt.Sprintf("%v; install it with: %s (scripts/test.sh does)", missing, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// runClient runs an external client with stdin, returning its stdout; a
// non-zero exit is an error that carries its stderr.
func runClient(ctx context.Context, t *testing.T, stdin []byte, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(string(stdin))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\nstderr:\n%s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 40))
	}
	if s := stderr.String(); s != "" {
		t.Logf("%s stderr:\n%s", name, lastLines(s, 20))
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
