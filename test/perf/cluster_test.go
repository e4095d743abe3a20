package perf

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// clusterRecordSize is the record value size of the cluster measurements,
// the 100 B of issue #15's figures.
const clusterRecordSize = 100

// clusterBatchBytes is Kafka's default producer batch.size.
const clusterBatchBytes = 16 << 10

// kafkaDefaultLinger is Kafka's default producer linger.ms since 4.0
// (KIP-1030).
const kafkaDefaultLinger = 5 * time.Millisecond

// replCase is one cell of TestClusterReplication.
type replCase struct {
	rf   int16
	acks int16 // 1 or -1
}

func (c replCase) name() string {
	acks := "1"
	if c.acks == -1 {
		acks = "all"
	}
	return fmt.Sprintf("RF%d/acks=%s", c.rf, acks)
}

// replResult is what one produce run of TestClusterReplication measured.
type replResult struct {
	c        replCase
	round    int
	records  int
	elapsed  time.Duration   // first Produce call to the last acknowledgement
	cpu      []time.Duration // per node, until every replica held every record
	catchUp  time.Duration   // last acknowledgement to every replica complete
	caughtUp bool
}

func (r replResult) recordsPerSec() float64 { return float64(r.records) / r.elapsed.Seconds() }

// TestClusterReplication measures what replication costs on a 3-node
// cluster: one producer writes SILKWORM_PERF_RECORDS records of 100 B at
// full speed to 6 partitions with Kafka's default batching (16 KiB
// batches, linger 5 ms), once to an RF 1 topic with acks=1 and once to an
// RF 3 topic (min.insync.replicas=2) with acks=all and idempotence, and
// reports records/s and the CPU time of all three brokers together per
// record, then the RF 3 / RF 1 ratios that issue #15 sets goals for.
func TestClusterReplication(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	records := envInt(t, "SILKWORM_PERF_RECORDS", 1_000_000)
	partitions := int32(envInt(t, "SILKWORM_PERF_PARTITIONS", 6))
	rounds := envInt(t, "SILKWORM_PERF_ROUNDS", 1)
	var cases []replCase
	for _, c := range []replCase{{rf: 1, acks: 1}, {rf: 3, acks: -1}} {
		if f := os.Getenv("SILKWORM_PERF_CASES"); f == "" || strings.Contains(c.name(), f) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("SILKWORM_PERF_CASES=%q matches neither RF1/acks=1 nor RF3/acks=all", os.Getenv("SILKWORM_PERF_CASES"))
	}

	c := startPerfCluster(t, 3)
	ctx := context.Background()
	adm := c.admin(t)
	if n := envNonNegative(t, "SILKWORM_PERF_IDLE_PARTITIONS", 0); n > 0 {
		// Partitions that every follower fetches but nobody writes to:
		// what they cost the replication of the busy ones.
		c.createTopic(ctx, t, adm, "repl-idle", int32(n), 3, nil)
	}
	idle := c.idleCPU(t)
	var results []replResult
	for round := 1; round <= rounds; round++ {
		order := slices.Clone(cases)
		if round%2 == 0 {
			// Alternate the order so drift on a shared machine does not
			// favour one case.
			slices.Reverse(order)
		}
		for _, rc := range order {
			topic := fmt.Sprintf("repl-rf%d-r%d", rc.rf, round)
			minISR := "1"
			if rc.rf >= 3 {
				minISR = "2"
			}
			c.createTopic(ctx, t, adm, topic, partitions, rc.rf, map[string]*string{"min.insync.replicas": &minISR})
			res := produceToCluster(ctx, t, c, adm, topic, partitions, rc, records)
			res.round = round
			results = append(results, res)
			t.Logf("%s round %d: %.0f rec/s, %.3f µs broker CPU/rec (3 brokers), replicas complete %v after the last ack",
				rc.name(), round, res.recordsPerSec(), microsPer(sumCPU(res.cpu), res.records), res.catchUp.Round(time.Millisecond))
		}
	}
	fmt.Println(replTable(results, partitions, idle))
}

// produceToCluster sends records records of 100 B to topic with one
// asynchronous producer, waits until every one is acknowledged, then until
// every replica holds as many bytes as its leader, and reads the brokers'
// CPU time then: RF 3's figure includes the copy of the replica that acks
// did not wait for.
func produceToCluster(ctx context.Context, t *testing.T, c *perfCluster, adm *kadm.Client, topic string, partitions int32, rc replCase, records int) replResult {
	t.Helper()
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(kafkaDefaultLinger),
		kgo.ProducerBatchMaxBytes(clusterBatchBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(100_000),
	}
	if rc.acks == 1 {
		// franz-go's idempotent producer requires acks=all.
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...)}, opts...)...)
	if err != nil {
		t.Fatalf("%s: producer: %v", rc.name(), err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, phaseTimeout)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		t.Fatalf("%s: ping: %v", rc.name(), err)
	}
	value := make([]byte, clusterRecordSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
		}
	}
	cpu0 := c.cpu(t)
	start := time.Now()
	for range records {
		cl.Produce(pctx, &kgo.Record{Value: value}, done)
	}
	if err := cl.Flush(pctx); err != nil {
		t.Fatalf("%s: flush: %v", rc.name(), err)
	}
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		t.Fatalf("%s: %d of %d records failed to produce, first: %v", rc.name(), n, records, *firstErr.Load())
	}
	acked := time.Now()
	err = testcluster.Poll(30*time.Second, func() error { return replicasEqual(ctx, adm, topic, partitions, rc.rf) })
	if err != nil {
		t.Logf("%s: replicas still differ, CPU read anyway: %v", rc.name(), err)
	}
	catchUp := time.Since(acked)
	return replResult{c: rc, records: records, elapsed: elapsed, cpu: cpuDelta(cpu0, c.cpu(t)), catchUp: catchUp, caughtUp: err == nil}
}

func replTable(results []replResult, partitions int32, idle float64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "3-node cluster, %d partitions, %d B records, %d B batches, linger %v, one producer. "+
		"CPU = utime+stime of the three broker processes per record, read once every replica held every record. "+
		"Idle, before the runs, the three brokers used %.1f %% of one core (Raft, heartbeats, replica fetches); "+
		"the idle column is that rate times the run's time per record, included in the sum.\n\n",
		partitions, clusterRecordSize, clusterBatchBytes, kafkaDefaultLinger, 100*idle)
	sb.WriteString("| case | round | records | rec/s | MB/s | broker CPU µs/rec (sum of 3) | node 1 µs/rec | node 2 µs/rec | node 3 µs/rec | of which idle µs/rec (est.) | replicas complete after last ack (ms) |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		complete := fmt.Sprintf("%.0f", ms(r.catchUp))
		if !r.caughtUp {
			complete = "not within 30 s"
		}
		fmt.Fprintf(&sb, "| %s | %d | %d | %.0f | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n",
			r.c.name(), r.round, r.records, r.recordsPerSec(),
			float64(r.records)*clusterRecordSize/(1<<20)/r.elapsed.Seconds(),
			microsPer(sumCPU(r.cpu), r.records),
			microsPer(r.cpu[0], r.records), microsPer(r.cpu[1], r.records), microsPer(r.cpu[2], r.records),
			idle*microsPer(r.elapsed+r.catchUp, r.records), complete)
	}
	// Ratios per round and over all rounds (total records over total time
	// and total CPU), when both cases ran.
	type agg struct {
		records int
		elapsed time.Duration
		cpu     time.Duration
	}
	var rf1, rf3 agg
	perRound := map[int][2]*replResult{}
	for i := range results {
		r := &results[i]
		pair := perRound[r.round]
		a := &rf3
		if r.c.rf == 1 {
			pair[0], a = r, &rf1
		} else {
			pair[1] = r
		}
		perRound[r.round] = pair
		a.records += r.records
		a.elapsed += r.elapsed
		a.cpu += sumCPU(r.cpu)
	}
	if rf1.records == 0 || rf3.records == 0 {
		return sb.String()
	}
	sb.WriteString("\n| RF3/RF1 | throughput RF3/RF1 (%, goal ≥ 80) | broker CPU per record RF3/RF1 (×, goal ≤ 3.3) |\n")
	sb.WriteString("|---|---:|---:|\n")
	ratio := func(name string, a, b agg) {
		tput := float64(b.records) / b.elapsed.Seconds() / (float64(a.records) / a.elapsed.Seconds())
		cpu := microsPer(b.cpu, b.records) / microsPer(a.cpu, a.records)
		fmt.Fprintf(&sb, "| %s | %.1f | %.2f |\n", name, 100*tput, cpu)
	}
	rounds := make([]int, 0, len(perRound))
	for r := range perRound {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	if len(rounds) > 1 {
		for _, round := range rounds {
			pair := perRound[round]
			if pair[0] == nil || pair[1] == nil {
				continue
			}
			ratio(fmt.Sprintf("round %d", round),
				agg{pair[0].records, pair[0].elapsed, sumCPU(pair[0].cpu)},
				agg{pair[1].records, pair[1].elapsed, sumCPU(pair[1].cpu)})
		}
	}
	ratio("all rounds", rf1, rf3)
	return sb.String()
}

// latencyStats is what TestClusterLatency measured.
type latencyStats struct {
	rate       int // records/s asked for
	measured   int // records produced in the measured phase
	elapsed    time.Duration
	e2e        []time.Duration // sorted, consume time - produce call time
	ack        []time.Duration // sorted, acknowledgement - produce call time
	lag        []time.Duration // sorted, produce call time - its time in the schedule
	cpu        []time.Duration // per node
	idle       float64         // the three brokers' CPU use with no clients, in cores
	failed     int64
	linger     time.Duration
	partitions int32
}

// TestClusterLatency measures end-to-end latency on a 3-node cluster as
// issue #15's fifth item asks: an RF 3 topic with min.insync.replicas=2,
// one idempotent acks=all producer sending SILKWORM_PERF_RATE records of
// 100 B per second (default 50,000) for SILKWORM_PERF_SECONDS (default 10)
// after a warm-up second, and one consumer reading concurrently. Each
// record carries the time of its Produce call; the consumer subtracts it
// from the time it sees the record (same host clock). It prints the
// percentiles of that end-to-end latency, of the produce acknowledgement
// latency and of how far the producer ran behind its schedule, and the
// brokers' CPU time per record (produce, replication and consume).
func TestClusterLatency(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	rate := envInt(t, "SILKWORM_PERF_RATE", 50_000)
	seconds := envInt(t, "SILKWORM_PERF_SECONDS", 10)
	warmup := time.Duration(envNonNegative(t, "SILKWORM_PERF_WARMUP_SECONDS", 1)) * time.Second
	partitions := int32(envInt(t, "SILKWORM_PERF_PARTITIONS", 6))
	// Kafka's EndToEndLatency tool sends with linger.ms=0; a 5 ms linger
	// would dominate a p99 goal of 3 ms at this rate.
	linger := time.Duration(envNonNegative(t, "SILKWORM_PERF_LINGER_MS", 0)) * time.Millisecond

	c := startPerfCluster(t, 3)
	ctx := context.Background()
	adm := c.admin(t)
	const topic = "latency"
	minISR := "2"
	c.createTopic(ctx, t, adm, topic, partitions, 3, map[string]*string{"min.insync.replicas": &minISR})

	// The consumer, reading from the start of the empty topic, runs until
	// cancelled; it alone touches e2e and consumed's writes.
	cons := c.Client(t,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond), // Kafka's fetch.max.wait.ms
	)
	cctx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	if err := cons.Ping(cctx); err != nil {
		t.Fatalf("consumer ping: %v", err)
	}
	var consumed atomic.Int64
	var e2e []time.Duration
	var consumeErr atomic.Pointer[error]
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for {
			fs := cons.PollFetches(cctx)
			if cctx.Err() != nil {
				return
			}
			now := time.Now().UnixNano()
			fs.EachError(func(topic string, p int32, err error) {
				err = fmt.Errorf("fetch %s-%d: %w", topic, p, err)
				consumeErr.CompareAndSwap(nil, &err)
			})
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) >= 9 && r.Value[8] == 1 {
					e2e = append(e2e, time.Duration(now-int64(binary.BigEndian.Uint64(r.Value))))
				}
				consumed.Add(1)
			})
		}
	}()

	prod := c.Client(t,
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(linger),
		kgo.ProducerBatchMaxBytes(clusterBatchBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		// Never block Produce: a backlog shows up as latency.
		kgo.MaxBufferedRecords(1<<20),
	)
	if err := prod.Ping(ctx); err != nil {
		t.Fatalf("producer ping: %v", err)
	}
	var (
		mu       sync.Mutex
		ack      []time.Duration
		failed   atomic.Int64
		firstErr atomic.Pointer[error]
	)
	done := func(r *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
			return
		}
		if r.Value[8] == 1 {
			d := time.Duration(time.Now().UnixNano() - int64(binary.BigEndian.Uint64(r.Value)))
			mu.Lock()
			ack = append(ack, d)
			mu.Unlock()
		}
	}
	pctx, cancel := context.WithTimeout(ctx, phaseTimeout)
	defer cancel()
	// send produces at rate for d, flagging the records with measured, and
	// returns how many it sent and how late each Produce call was.
	send := func(d time.Duration, measured bool) (int, []time.Duration) {
		var lag []time.Duration
		start := time.Now()
		sent := 0
		for {
			el := time.Since(start)
			if el >= d {
				return sent, lag
			}
			due := int(el.Seconds() * float64(rate))
			for ; sent < due; sent++ {
				now := time.Now()
				v := make([]byte, clusterRecordSize)
				binary.BigEndian.PutUint64(v, uint64(now.UnixNano()))
				if measured {
					v[8] = 1
					sched := start.Add(time.Duration(float64(sent) / float64(rate) * float64(time.Second)))
					lag = append(lag, now.Sub(sched))
				}
				prod.Produce(pctx, &kgo.Record{Value: v}, done)
			}
			time.Sleep(100 * time.Microsecond) // pacing, not a wait for an outcome
		}
	}
	idle := c.idleCPU(t)
	warm, _ := send(warmup, false)
	cpu0 := c.cpu(t)
	start := time.Now()
	measured, lag := send(time.Duration(seconds)*time.Second, true)
	elapsed := time.Since(start)
	if err := prod.Flush(pctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d records failed to produce, first: %v", n, warm+measured, *firstErr.Load())
	}
	want := int64(warm+measured) - failed.Load()
	err := testcluster.Poll(60*time.Second, func() error {
		if p := consumeErr.Load(); p != nil {
			return testcluster.GiveUp(*p)
		}
		if got := consumed.Load(); got < want {
			return fmt.Errorf("consumed %d of %d records", got, want)
		}
		return nil
	})
	cpu1 := c.cpu(t)
	stopConsumer()
	<-consumerDone
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	if got := consumed.Load(); got != want {
		t.Errorf("consumed %d records, produced %d", got, want)
	}
	mu.Lock()
	st := latencyStats{rate: rate, measured: measured, elapsed: elapsed, e2e: e2e, ack: ack, lag: lag,
		cpu: cpuDelta(cpu0, cpu1), idle: idle, failed: failed.Load(), linger: linger, partitions: partitions}
	mu.Unlock()
	slices.Sort(st.e2e)
	slices.Sort(st.ack)
	slices.Sort(st.lag)
	fmt.Println(latencyTable(st))
}

func latencyTable(st latencyStats) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "3-node cluster, RF 3, min.insync.replicas=2, acks=all (idempotent), %d partitions, %d B records, "+
		"%d B batches, linger %v; asked %d records/s, sent %.0f records/s for %.1f s (%d records). "+
		"Latencies in ms; e2e = consume time - Produce call time. CPU = utime+stime of the three brokers per measured record.\n\n",
		st.partitions, clusterRecordSize, clusterBatchBytes, st.linger, st.rate,
		float64(st.measured)/st.elapsed.Seconds(), st.elapsed.Seconds(), st.measured)
	sb.WriteString("| latency | samples | p50 | p99 | p99.9 | max |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, s []time.Duration) {
		fmt.Fprintf(&sb, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", name, len(s),
			ms(percentile(s, 0.5)), ms(percentile(s, 0.99)), ms(percentile(s, 0.999)), ms(percentile(s, 1)))
	}
	row("end to end (goal p99 ≤ 3, p99.9 ≤ 10)", st.e2e)
	row("produce ack", st.ack)
	row("producer behind schedule", st.lag)
	sb.WriteString("\n| load | rec/s | broker CPU µs/rec (sum of 3) | node 1 µs/rec | node 2 µs/rec | node 3 µs/rec |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&sb, "| %d rec/s | %.0f | %.3f | %.3f | %.3f | %.3f |\n", st.rate,
		float64(st.measured)/st.elapsed.Seconds(), microsPer(sumCPU(st.cpu), st.measured),
		microsPer(st.cpu[0], st.measured), microsPer(st.cpu[1], st.measured), microsPer(st.cpu[2], st.measured))
	fmt.Fprintf(&sb, "\nIdle, before the run: the three brokers used %.1f %% of one core over %v (Raft, heartbeats, replica fetches), "+
		"%.3f µs per record at the asked rate.\n", 100*st.idle, idleWindow, st.idle*1e6/float64(st.rate))
	return sb.String()
}
