package perf

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/bench"
)

// TestReplication measures what replication costs on a 3-node cluster of
// `silkworm server` processes (combined broker and controller nodes,
// PLAINTEXT on 127.0.0.1), for one or several broker binaries in turn:
//
//   - throughput: SILKWORM_PERF_RECORDS (default 1,000,000) records of
//     100 B produced with acks=all by one franz-go producer (Kafka's
//     default batching: 16 KiB batches, linger 5 ms) to a 6-partition topic
//     of replication factor 1, then to one of replication factor 3
//     (min.insync.replicas=2): records/s and the CPU time per record of
//     the three brokers together (utime+stime from /proc), and the ratios
//     RF 3 / RF 1;
//   - latency: for SILKWORM_PERF_LATENCY_SECONDS (default 10) one producer
//     sends 100 B records at a fixed SILKWORM_PERF_RATE (default 50,000)
//     records/s to a 6-partition RF 3 topic (acks=all, min.insync 2,
//     linger 0) with its send time in the value, and one consumer reading
//     from the leaders records receive time - send time: p50, p99, p99.9
//     and max end to end, the first second left out as warm-up, and the
//     three brokers' CPU use (100 % = one core). SILKWORM_PERF_LATENCY_RF
//     (default 3) changes the topic's replication factor.
//
// SILKWORM_PERF_BROKER_BINS is a comma-separated list of binaries (default:
// this tree, built), run alternately SILKWORM_PERF_REPS times (default 1),
// so an A/B comparison sees the same machine load. A measurement, not a
// test: skipped unless SILKWORM_PERF=1.
func TestReplication(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	records := envInt(t, "SILKWORM_PERF_RECORDS", 1_000_000)
	reps := envInt(t, "SILKWORM_PERF_REPS", 1)
	rate := envInt(t, "SILKWORM_PERF_RATE", 50_000)
	latencySecs := envInt(t, "SILKWORM_PERF_LATENCY_SECONDS", 10)
	only := os.Getenv("SILKWORM_PERF_REPLICATION_PHASES") // "", "throughput" or "latency"

	var bins []string
	if s := os.Getenv("SILKWORM_PERF_BROKER_BINS"); s != "" {
		bins = strings.Split(s, ",")
	} else {
		bins = []string{buildBroker(t)}
	}
	var lines []string
	for rep := range reps {
		for _, bin := range bins {
			r := runReplication(t, bin, records, rate, latencySecs, only)
			line := fmt.Sprintf("| %d | %s | %s |", rep+1, filepath.Base(bin), r)
			t.Log(line)
			lines = append(lines, line)
		}
	}
	fmt.Println("| rep | binary | RF1 rec/s | RF1 µs CPU/rec | RF3 rec/s | RF3 µs CPU/rec | RF3/RF1 rec/s | RF3/RF1 CPU/rec | e2e p50 | p99 | p99.9 | max | sent/s | broker CPU |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, l := range lines {
		fmt.Println(l)
	}
}

type replicationResult struct {
	rf1, rf3 phase
	lat      []time.Duration
	sentRate float64
	latCPU   float64 // broker CPU seconds per second during the latency phase
}

func (r replicationResult) String() string {
	cell := func(p phase) string {
		if p.records == 0 {
			return "- | -"
		}
		return fmt.Sprintf("%.0f | %.2f", p.recordsPerSec(), p.brokerMicrosPerRecord())
	}
	ratio := "- | -"
	if r.rf1.records > 0 && r.rf3.records > 0 {
		ratio = fmt.Sprintf("%.0f %% | %.2f×", 100*r.rf3.recordsPerSec()/r.rf1.recordsPerSec(),
			r.rf3.brokerMicrosPerRecord()/r.rf1.brokerMicrosPerRecord())
	}
	lat := "- | - | - | - | - | -"
	if n := len(r.lat); n > 0 {
		q := func(f float64) string {
			return fmt.Sprintf("%.2f ms", float64(r.lat[min(n-1, int(f*float64(n)))])/1e6)
		}
		lat = fmt.Sprintf("%s | %s | %s | %s | %.0f | %.0f %%", q(0.5), q(0.99), q(0.999), q(1), r.sentRate, 100*r.latCPU)
	}
	return cell(r.rf1) + " | " + cell(r.rf3) + " | " + ratio + " | " + lat
}

func runReplication(t *testing.T, bin string, records, rate, latencySecs int, only string) replicationResult {
	t.Helper()
	ctx := context.Background()
	c, err := bench.StartEmbedded(ctx, bench.EmbeddedConfig{
		Executable:   bin,
		Brokers:      3,
		StartTimeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("start 3 brokers of %s: %v", bin, err)
	}
	defer c.Close()
	adm, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	create := func(name string, rf int16) {
		t.Helper()
		cfg := map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}
		if rf == 1 {
			cfg = nil
		}
		resp, err := kadm.NewClient(adm).CreateTopic(ctx, 6, rf, cfg, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("create topic %s: %v", name, err)
		}
	}
	cpu := func() time.Duration {
		u, ok := c.Usage()
		if !ok {
			t.Fatal("broker usage")
		}
		return u.CPU
	}
	var r replicationResult
	if only == "" || only == "throughput" {
		create("rf1", 1)
		create("rf3", 3)
		r.rf1 = produceAll(t, c.Bootstrap(), "rf1", records, cpu)
		r.rf3 = produceAll(t, c.Bootstrap(), "rf3", records, cpu)
	}
	if only == "" || only == "latency" {
		create("e2e", int16(envInt(t, "SILKWORM_PERF_LATENCY_RF", 3)))
		cpu0, start := cpu(), time.Now()
		r.lat, r.sentRate = endToEnd(t, c.Bootstrap(), "e2e", rate, latencySecs)
		r.latCPU = float64(cpu()-cpu0) / float64(time.Since(start))
	}
	return r
}

// produceAll sends n records of 100 B with acks=all and Kafka's default
// batching and waits for every acknowledgement.
func produceAll(t *testing.T, bootstrap, topic string, n int, cpu func() time.Duration) phase {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(16<<10),
		kgo.MaxBufferedRecords(100_000),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 100)
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
		}
	}
	cpu0 := cpu()
	start := time.Now()
	for range n {
		cl.Produce(ctx, &kgo.Record{Value: value}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("%s: flush: %v", topic, err)
	}
	elapsed := time.Since(start)
	cpu1 := cpu()
	if failed.Load() > 0 {
		t.Fatalf("%s: %d records failed, first: %v", topic, failed.Load(), *firstErr.Load())
	}
	return phase{records: n, bytes: int64(n) * 100, elapsed: elapsed, brokerCPU: cpu1 - cpu0}
}

// endToEnd produces at a fixed rate for secs seconds with the send time in
// each value and returns the sorted end-to-end latencies seen by a
// consumer (the first second left out) and the rate actually sent.
func endToEnd(t *testing.T, bootstrap, topic string, rate, secs int) ([]time.Duration, float64) {
	t.Helper()
	seeds := kgo.SeedBrokers(strings.Split(bootstrap, ",")...)
	prod, err := kgo.NewClient(seeds,
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.MaxBufferedRecords(1_000_000),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cons, err := kgo.NewClient(seeds,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	if err := prod.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// Warm up: one record each way, so the consumer has its partitions
	// and connections before the clock starts.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 100)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for got := 0; got == 0; {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		got = fs.NumRecords()
	}

	total := rate * secs
	var (
		mu   sync.Mutex
		lats = make([]time.Duration, 0, total)
	)
	start := time.Now()
	warm := start.Add(time.Second).UnixNano()
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		seen := 0
		for seen < total {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			now := time.Now().UnixNano()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				seen++
				sent := int64(binary.BigEndian.Uint64(r.Value))
				if sent >= warm {
					lats = append(lats, time.Duration(now-sent))
				}
			})
			mu.Unlock()
		}
	}()
	var failed atomic.Int64
	// One tick per millisecond, each sending what the rate owes by then.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; sent < due; sent++ {
			v := make([]byte, 100)
			binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
			prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Add(1)
				}
			})
		}
		<-tick.C
	}
	sentRate := float64(total) / time.Since(start).Seconds()
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	<-consumed
	if failed.Load() > 0 {
		t.Fatalf("%d records failed to produce", failed.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lats)
	return lats, sentRate
}
