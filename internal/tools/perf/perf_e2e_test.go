package perf

import (
	"bytes"
	"context"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/javafmt"
)

// startBroker runs an in-process Silkworm broker for the test and returns
// its address.
func startBroker(t *testing.T) string {
	t.Helper()
	return brokertest.Start(t, "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=false")
}

func adminClient(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func createTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	resp, err := adm.CreateTopic(context.Background(), partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// storedRecords is the number of records the broker holds for topic: the
// sum over partitions of LogEndOffset - LogStartOffset.
func storedRecords(t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ctx := context.Background()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(l kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, l.Partition)
		n += l.Offset - s.Offset
	})
	return n
}

var (
	producerTotalRE = regexp.MustCompile(`^(\d+) records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)
	consumerTotalRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d+\.\d{4}, \S+, (\d+), \S+, (\d+), (-?\d+), \S+, \S+$`)
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func producedCount(t *testing.T, out string) int64 {
	t.Helper()
	m := producerTotalRE.FindStringSubmatch(lastLine(out))
	if m == nil {
		t.Fatalf("last line is not Kafka's producer summary:\n%s", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestPerfCountsMatchBroker runs both perf tools against a broker and
// checks that what they count is what the broker stored.
func TestPerfCountsMatchBroker(t *testing.T) {
	addr := startBroker(t)
	adm := adminClient(t, addr)
	createTopic(t, adm, "perf", 3)
	ctx := context.Background()

	var out bytes.Buffer
	err := ProducerPerf(ctx, []string{"--topic", "perf", "--num-records", "3000", "--record-size", "100",
		"--throughput", "-1", "--producer-props", "bootstrap.servers=" + addr, "acks=1", "linger.ms=1"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("producer-perf-test: %v\n%s", err, out.String())
	}
	sent := producedCount(t, out.String())
	// Paced run, idempotent producer with acks=all, config from a file too.
	out.Reset()
	err = ProducerPerf(ctx, []string{"--topic", "perf", "--num-records", "500", "--record-size", "1024",
		"--throughput", "5000", "--producer-props", "bootstrap.servers=" + addr, "acks=all", "compression.type=lz4"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("paced producer-perf-test: %v\n%s", err, out.String())
	}
	sent += producedCount(t, out.String())
	if sent != 3500 {
		t.Errorf("producers counted %d records, want 3500", sent)
	}
	if stored := storedRecords(t, adm, "perf"); stored != sent {
		t.Errorf("broker stored %d records, producers counted %d", stored, sent)
	}

	out.Reset()
	err = ConsumerPerf(ctx, []string{"--broker-list", addr, "--topic", "perf", "--messages", "3500",
		"--group", "g1", "--num-fetch-threads", "10", "--timeout", "60000"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("consumer-perf-test: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if lines[0] != consumerHeader(false) {
		t.Errorf("header = %q", lines[0])
	}
	m := consumerTotalRE.FindStringSubmatch(lastLine(out.String()))
	if m == nil {
		t.Fatalf("last line is not Kafka's consumer summary:\n%s", out.String())
	}
	if m[1] != "3500" {
		t.Errorf("consumer counted %s records, broker stored 3500:\n%s", m[1], out.String())
	}
	// MB consumed: 3000*100 + 500*1024 bytes.
	if want := javafmt.Fixed(float64(3000*100+500*1024)/mib, 4); !strings.Contains(lastLine(out.String()), ", "+want+", ") {
		t.Errorf("MB consumed is not %s: %s", want, lastLine(out.String()))
	}
}

func TestConsumerPerfDetailedAndTimeout(t *testing.T) {
	addr := startBroker(t)
	adm := adminClient(t, addr)
	createTopic(t, adm, "few", 1)
	ctx := context.Background()
	var out bytes.Buffer
	if err := ProducerPerf(ctx, []string{"--topic", "few", "--num-records", "10", "--payload-monotonic",
		"--throughput", "-1", "--producer-props", "bootstrap.servers=" + addr}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Ask for more than there is: the tool gives up after --timeout
	// without records and says so in Kafka's words.
	out.Reset()
	err := ConsumerPerf(ctx, []string{"--bootstrap-server", addr, "--topic", "few", "--messages", "11",
		"--timeout", "300", "--show-detailed-stats", "--reporting-interval", "1"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.HasPrefix(s, consumerHeader(true)+"\n") {
		t.Errorf("detailed header missing:\n%s", s)
	}
	if !strings.Contains(s, consumerTimeoutWarning(300)) {
		t.Errorf("timeout warning missing:\n%s", s)
	}
}

func TestE2ELatency(t *testing.T) {
	addr := startBroker(t)
	var out bytes.Buffer
	// Positional form; the topic does not exist and is created.
	if err := EndToEndLatency(context.Background(), []string{addr, "lat", "20", "all", "64"}, &out, io.Discard); err != nil {
		t.Fatalf("e2e-latency: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, re := range []string{
		`(?m)^Topic "lat" does not exist\. Will create topic with 1 partition\(s\) and replication factor = 1$`,
		`(?m)^0\t\d+\.\d+(E-?\d+)?$`,
		`(?m)^Avg latency: \d+\.\d{4} ms$`,
		`(?m)^Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+$`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("output does not match %s:\n%s", re, s)
		}
	}
	// Option form on the now existing topic.
	out.Reset()
	if err := EndToEndLatency(context.Background(), []string{"--bootstrap-server", addr, "--topic", "lat",
		"--num-records", "5", "--producer-acks", "1", "--record-size", "10"}, &out, io.Discard); err != nil {
		t.Fatalf("e2e-latency: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "does not exist") || !strings.Contains(out.String(), "Avg latency:") {
		t.Errorf("unexpected output:\n%s", out.String())
	}
}

func TestTrouble(t *testing.T) {
	addr := startBroker(t)
	ctx := context.Background()
	// A missing topic is named.
	err := ConsumerPerf(ctx, []string{"--bootstrap-server", addr, "--topic", "nope", "--messages", "1"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("consumer-perf-test on a missing topic: %v", err)
	}
	err = ProducerPerf(ctx, []string{"--topic", "nope", "--num-records", "1", "--record-size", "1", "--throughput", "-1",
		"--producer-props", "bootstrap.servers=" + addr}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("producer-perf-test on a missing topic (auto-create off): %v", err)
	}
	// An unreachable bootstrap server is an error naming it, not a hang.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	for name, run := range map[string]func() error{
		"producer": func() error {
			return ProducerPerf(ctx, []string{"--topic", "t", "--num-records", "1", "--record-size", "1", "--throughput", "-1",
				"--producer-props", "bootstrap.servers=" + dead}, io.Discard, io.Discard)
		},
		"consumer": func() error {
			return ConsumerPerf(ctx, []string{"--bootstrap-server", dead, "--topic", "t", "--messages", "1"}, io.Discard, io.Discard)
		},
		"e2e": func() error {
			return EndToEndLatency(ctx, []string{dead, "t", "1", "1", "1"}, io.Discard, io.Discard)
		},
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), dead) {
			t.Errorf("%s against %s: %v", name, dead, err)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProducerInterruptPrintsSummary cancels a long paced run once the
// broker has some of its records (as Ctrl-C does) and expects the summary
// of what was acknowledged.
func TestProducerInterruptPrintsSummary(t *testing.T) {
	addr := startBroker(t)
	adm := adminClient(t, addr)
	createTopic(t, adm, "ctrlc", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- ProducerPerf(ctx, []string{"--topic", "ctrlc", "--num-records", "100000000", "--record-size", "10",
			"--throughput", "2000", "--producer-props", "bootstrap.servers=" + addr, "linger.ms=0"}, &out, io.Discard)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for storedRecords(t, adm, "ctrlc") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no record reached the broker")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted producer-perf-test: %v", err)
	}
	n := producedCount(t, out.String())
	if stored := storedRecords(t, adm, "ctrlc"); n == 0 || n != stored {
		t.Errorf("summary counts %d records, broker stored %d", n, stored)
	}
}
