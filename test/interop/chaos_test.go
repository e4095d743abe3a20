// The process-level cluster test of issue 5 (cluster_test.go has the
// helpers). Three silkworm server processes start from
// config/cluster/node{1,2,3}.properties with free ports, temp data dirs and
// a 3 s broker session timeout. A topic has 3 partitions, RF 3 and
// min.insync.replicas=2. Two producers write unique values ("p<producer>-<seq>",
// round-robin over the partitions, about 2,000 a second each) while the test,
// in a loop, kills the leader of partition k%3 with SIGKILL, times the first
// acknowledged produce to that partition (from a third, "probe" producer),
// restarts the node and waits until it is back in every ISR. Afterwards it
// compares the batch headers and CRCs in every replica's segment files below
// the high watermark and reads every partition back.
//
// Environment:
//
//	SILKWORM_CHAOS_SECONDS=n  inject faults for n seconds (default 60 for
//	                          acks=all, 30 for acks=1)
//	SILKWORM_CHAOS_HARSH=1    kill the leader of a random partition every
//	                          0-3 s, restarting it at once, without waiting
//	                          for the ISR to recover between faults

package interop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	embedcheck "github.com/silkworm/silkworm/embed/check"
	"github.com/silkworm/silkworm/internal/testcluster"
)

const (
	chaosTopic      = "chaos"
	chaosPartitions = 3
	// chaosProducers is the number of workload producers; the failover
	// probe is one more, numbered chaosProducers.
	chaosProducers = 2
)

// chaosServerOverrides shorten the failure detection of the documented
// configuration so that a minute holds many faults: a killed broker is
// fenced after 3 s without heartbeats.
var chaosServerOverrides = []string{
	"broker.session.timeout.ms=3000",
	"broker.heartbeat.interval.ms=500",
	"replica.lag.time.max.ms=3000",
	"replica.fetch.wait.max.ms=100",
	"group.initial.rebalance.delay.ms=0",
	"offsets.topic.num.partitions=3",
}

// TestClusterChaos is the durability promise of issue 5: with RF 3,
// min.insync.replicas=2 and idempotent acks=all producers, killing the
// leader of a partition with SIGKILL again and again loses no acknowledged
// record, duplicates none and reorders none, and the replicas' logs are
// identical below the high watermark afterwards.
func TestClusterChaos(t *testing.T) {
	runChaos(t, chaosOptions{acks: kgo.AllISRAcks(), idempotent: true, strict: true, duration: chaosDuration(t, 60*time.Second)})
}

// TestClusterChaosAcks1 is the same fault schedule with acks=1 producers.
// Kafka allows an acks=1 record to be lost when its leader dies before the
// followers copied it; the test measures how many were and reports it
// without failing. Replica divergence still fails it.
func TestClusterChaosAcks1(t *testing.T) {
	runChaos(t, chaosOptions{acks: kgo.LeaderAck(), idempotent: false, strict: false, duration: chaosDuration(t, 30*time.Second)})
}

// chaosDuration is how long faults are injected: SILKWORM_CHAOS_SECONDS, or
// def.
func chaosDuration(t *testing.T, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv("SILKWORM_CHAOS_SECONDS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("SILKWORM_CHAOS_SECONDS=%q: want a number of seconds", v)
	}
	return time.Duration(n) * time.Second
}

type chaosOptions struct {
	acks       kgo.Acks
	idempotent bool
	// strict makes lost, doubled, misplaced and reordered acknowledged
	// records test failures; otherwise they are only reported.
	strict   bool
	duration time.Duration
	// harsh kills without waiting for the ISR to recover in between
	// (SILKWORM_CHAOS_HARSH=1).
	harsh bool
}

func (o chaosOptions) producerOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(chaosTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(o.acks),
		kgo.MaxBufferedRecords(4000),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
	if !o.idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts
}

func runChaos(t *testing.T, o chaosOptions) {
	o.harsh = os.Getenv("SILKWORM_CHAOS_HARSH") == "1"
	if os.Getenv("SILKWORM_TEST_BOOTSTRAP") != "" || os.Getenv("SILKWORM_TEST_BROKER") == "kfake" {
		t.Skip("the chaos test runs its own three silkworm processes")
	}
	c := startProcessCluster(t, 3, chaosServerOverrides...)
	ctx, cancel := context.WithTimeout(context.Background(), o.duration+5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.Client(t))

	res, err := adm.CreateTopic(ctx, chaosPartitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, chaosTopic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if err := waitFullISR(ctx, adm, chaosTopic, chaosPartitions, 60*time.Second); err != nil {
		t.Fatalf("topic never fully replicated: %v", err)
	}

	w := &chaosWorkload{acked: map[string]chaosAck{}, failures: map[string]int{}}
	stop := make(chan struct{})
	stopProducers := sync.OnceFunc(func() { close(stop) })
	defer stopProducers() // on a fatal error mid-way
	var wg sync.WaitGroup
	for i := range chaosProducers {
		cl := c.Client(t, o.producerOpts()...)
		wg.Go(func() { w.produce(cl, i, stop) })
	}
	probe := c.Client(t, o.producerOpts()...)
	probeSeq := 0

	// The faults: kill the leader of partition k%3 with SIGKILL, time the
	// first acknowledged produce to that partition (on the new leader),
	// restart the killed node and wait until it is back in every ISR.
	var failovers []time.Duration
	faults := 0
	end := time.Now().Add(o.duration)
	for time.Now().Before(end) && o.harsh {
		// Harsh schedule: kill the leader of a random partition, restart
		// it at once and go on without waiting for the ISR to recover, so
		// that leaders die while followers are still catching up.
		p := int32(rand.IntN(chaosPartitions))
		var pd kadm.PartitionDetail
		err := testcluster.Poll(60*time.Second, func() error {
			var err error
			if pd, err = partitionDetail(ctx, adm, chaosTopic, p); err == nil && pd.Leader < 0 {
				err = fmt.Errorf("%s-%d has no leader", chaosTopic, p)
			}
			return err
		})
		if err != nil {
			t.Fatalf("before fault %d: %v", faults+1, err)
		}
		victim := c.Node(t, pd.Leader)
		victim.Kill(t)
		faults++
		t.Logf("fault %d: killed node %d (leader of %s-%d, epoch %d, isr %v)", faults, victim.ID, chaosTopic, p, pd.LeaderEpoch, pd.ISR)
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond) // pacing
		victim.Start(t)
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond) // pacing
	}
	for time.Now().Before(end) && !o.harsh {
		p := int32(faults % chaosPartitions)
		pd, err := partitionDetail(ctx, adm, chaosTopic, p)
		if err != nil || pd.Leader < 0 {
			t.Fatalf("leader of %s-%d before fault %d: %v (leader %d)", chaosTopic, p, faults+1, err, pd.Leader)
		}
		victim := c.Node(t, pd.Leader)
		victim.Kill(t)
		faults++
		killed := time.Now()

		pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
		value := chaosValue(chaosProducers, probeSeq)
		probeSeq++
		// Retry until the deadline: while metadata propagates after a
		// fault a client may get a retriable error it gives up on (franz-go
		// stops after a few UNKNOWN_TOPIC_OR_PARTITION answers).
		var pr *kgo.Record
		for {
			pr, err = probe.ProduceSync(pctx, &kgo.Record{Partition: p, Value: []byte(value)}).First()
			if err == nil || pctx.Err() != nil {
				break
			}
			w.promise(pr, err)
			value = chaosValue(chaosProducers, probeSeq)
			probeSeq++
			time.Sleep(50 * time.Millisecond)
		}
		pcancel()
		w.promise(pr, err)
		if err != nil {
			t.Errorf("fault %d: no produce to %s-%d succeeded within 60s of killing its leader %d: %v", faults, chaosTopic, p, victim.ID, err)
			break
		}
		failover := time.Since(killed)
		failovers = append(failovers, failover)

		victim.Start(t)
		if err := waitFullISR(ctx, adm, chaosTopic, chaosPartitions, 60*time.Second); err != nil {
			t.Errorf("fault %d: node %d did not rejoin every ISR: %v", faults, victim.ID, err)
			break
		}
		t.Logf("fault %d: killed node %d (leader of %s-%d, epoch %d); first produce acknowledged after %v; back in every ISR after %v",
			faults, victim.ID, chaosTopic, p, pd.LeaderEpoch, failover.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
		// Let the producers run on a healthy cluster for a moment; this
		// paces the faults, it waits for no outcome.
		time.Sleep(2 * time.Second)
	}

	stopProducers()
	wg.Wait()
	for _, f := range w.flushErrs {
		t.Errorf("flush: %v", f)
	}
	if t.Failed() {
		return
	}

	// Every replica is in the ISR again: the logs must now converge.
	dirs := map[int32]string{}
	for _, n := range c.Nodes {
		dirs[n.ID] = n.Dir
	}
	hwm := convergedLogs(t, ctx, adm, dirs)

	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	logs, err := embedcheck.Read(rctx, []string{chaosTopic}, kgo.SeedBrokers(c.Seeds()...))
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	r := chaosCheck(w.acked, logs)
	w.mu.Lock()
	failed := 0
	var failures []string
	for msg, n := range w.failures {
		failed += n
		failures = append(failures, fmt.Sprintf("%d× %s", n, msg))
	}
	w.mu.Unlock()
	slices.Sort(failures)
	slices.Sort(failovers)
	t.Logf("acks=%s: %d faults injected (kill -9 of a partition leader) in %v; %d records acknowledged, %d failed to the producer %v",
		ackName(o.acks), faults, o.duration, len(w.acked), failed, failures)
	if len(failovers) > 0 {
		t.Logf("kill -9 of the leader to the first acknowledged produce on the new leader: min %v, median %v, max %v",
			failovers[0].Round(time.Millisecond), failovers[len(failovers)/2].Round(time.Millisecond), failovers[len(failovers)-1].Round(time.Millisecond))
	}
	t.Logf("read back %d records up to the high watermarks %v: %d acknowledged records checked (present once, at their acknowledged offset, in order); lost %d, doubled %d, misplaced %d, out of order %d",
		r.read, hwm, r.checked, r.lost, r.doubled, r.misplaced, r.outOfOrder)
	if o.strict {
		for _, p := range r.problems {
			t.Error(p)
		}
	} else if len(r.problems) > 0 {
		t.Logf("acks=1: %d acknowledged records lost (allowed, measured); first problems:\n%s", r.lost, strings.Join(r.problems[:min(10, len(r.problems))], "\n"))
	}
}

// convergedLogs waits until every partition of the chaos topic has its
// full ISR again and the replicas' segment files (dirs: node id to data
// dir) are identical below the high watermark, which it returns by
// partition. A difference that does not go away is a test error.
func convergedLogs(t *testing.T, ctx context.Context, adm *kadm.Client, dirs map[int32]string) map[int32]int64 {
	t.Helper()
	if err := waitFullISR(ctx, adm, chaosTopic, chaosPartitions, 60*time.Second); err != nil {
		t.Fatalf("after the faults: %v", err)
	}
	ends, err := adm.ListEndOffsets(ctx, chaosTopic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	hwm := map[int32]int64{}
	for p := range int32(chaosPartitions) {
		lo, ok := ends.Lookup(chaosTopic, p)
		if !ok || lo.Err != nil {
			t.Fatalf("end offset of %s-%d: %v", chaosTopic, p, lo.Err)
		}
		hwm[p] = lo.Offset
	}
	for p := range int32(chaosPartitions) {
		err := testcluster.Poll(60*time.Second, func() error {
			replicas := map[int32][]batchInfo{}
			for id, dir := range dirs {
				bs, err := readReplicaBatches(dir, chaosTopic, p)
				if err != nil {
					return err
				}
				replicas[id] = bs
			}
			if diff := replicaLogDiff(replicas, hwm[p]); diff != "" {
				return errors.New(diff)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s-%d: replicas differ below the high watermark %d: %v", chaosTopic, p, hwm[p], err)
		}
	}
	return hwm
}

func ackName(a kgo.Acks) string {
	if a == kgo.AllISRAcks() {
		return "all"
	}
	return "1"
}

// chaosAck is where the broker said it stored a record.
type chaosAck struct {
	Partition int32
	Offset    int64
}

// chaosWorkload records the outcome of every produced record. Its methods
// are safe for concurrent use (promises run on client goroutines).
type chaosWorkload struct {
	mu        sync.Mutex
	acked     map[string]chaosAck // value -> where it was acknowledged
	failures  map[string]int      // error text -> records failed with it
	flushErrs []error
}

// chaosValue is the unique value of record seq of producer.
func chaosValue(producer, seq int) string { return fmt.Sprintf("p%d-%09d", producer, seq) }

// parseChaosValue splits a value made by chaosValue.
func parseChaosValue(v string) (producer, seq int, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(v, "p"), "-")
	if !found {
		return 0, 0, false
	}
	producer, err1 := strconv.Atoi(a)
	seq, err2 := strconv.Atoi(b)
	return producer, seq, err1 == nil && err2 == nil
}

func (w *chaosWorkload) promise(r *kgo.Record, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failures[err.Error()]++
		return
	}
	w.acked[string(r.Value)] = chaosAck{Partition: r.Partition, Offset: r.Offset}
}

// produce writes unique values round-robin over the partitions, about
// 2,000 a second, until stop is closed, then waits for every outstanding
// record's outcome.
func (w *chaosWorkload) produce(cl *kgo.Client, producer int, stop <-chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	ctx := context.Background()
	for seq := 0; ; seq++ {
		if seq%20 == 0 {
			select {
			case <-stop:
				fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				if err := cl.Flush(fctx); err != nil {
					w.mu.Lock()
					w.flushErrs = append(w.flushErrs, fmt.Errorf("producer %d: %w", producer, err))
					w.mu.Unlock()
				}
				return
			case <-tick.C:
			}
		}
		cl.Produce(ctx, &kgo.Record{Partition: int32(seq % chaosPartitions), Value: []byte(chaosValue(producer, seq))}, w.promise)
	}
}

// chaosRecord is one record read back.
type chaosRecord struct {
	Offset int64
	Value  string
}

// chaosReport is the outcome of checkChaos.
type chaosReport struct {
	read       int // records read back
	checked    int // acknowledged records found once at their offset
	lost       int // acknowledged, not read back
	doubled    int // values read back more than once
	misplaced  int // acknowledged at one offset, read at another
	outOfOrder int // read back after a value its producer sent later
	problems   []string
}

// checkChaos compares what was read back with what was acknowledged, with
// the embed/check package: each acknowledged value once, at the partition
// and offset of its acknowledgement, in its producer's order; no value
// twice. It also requires offsets without gaps, which holds for the chaos
// topic (no transactions, no compaction).
func checkChaos(acked map[string]chaosAck, logs map[int32][]chaosRecord) chaosReport {
	var read []embedcheck.Log
	for p, recs := range logs {
		l := embedcheck.Log{Topic: chaosTopic, Partition: p, HighWatermark: int64(len(recs))}
		for _, r := range recs {
			l.Records = append(l.Records, embedcheck.Record{Topic: chaosTopic, Partition: p, Offset: r.Offset, Value: []byte(r.Value)})
		}
		if n := len(recs); n > 0 {
			l.HighWatermark = recs[n-1].Offset + 1
		}
		read = append(read, l)
	}
	slices.SortFunc(read, func(a, b embedcheck.Log) int { return cmp.Compare(a.Partition, b.Partition) })
	return chaosCheck(acked, read)
}

// chaosCheck is checkChaos on a read-back by embedcheck.Read.
func chaosCheck(acked map[string]chaosAck, logs []embedcheck.Log) chaosReport {
	rep := embedcheck.Compare(chaosAcked(acked), logs)
	r := chaosReport{
		read:       rep.Read,
		checked:    rep.Verified,
		lost:       rep.Count(embedcheck.Lost),
		doubled:    rep.Count(embedcheck.Duplicated),
		misplaced:  rep.Count(embedcheck.Misplaced),
		outOfOrder: rep.Count(embedcheck.Reordered),
	}
	for _, p := range rep.Problems {
		if len(r.problems) == 50 {
			break
		}
		r.problems = append(r.problems, p.String())
	}
	for _, l := range logs {
		for i, rec := range l.Records {
			if want := l.LogStartOffset + int64(i); rec.Offset != want {
				r.problems = append(r.problems, fmt.Sprintf("%s-%d: record %d has offset %d, want %d (a gap)", l.Topic, l.Partition, i, rec.Offset, want))
				break
			}
		}
	}
	return r
}

// chaosAcked is the checker's input: the acknowledged records of each
// producer in the order it sent them (the sequence in the value), which
// is the order franz-go acknowledged them in.
func chaosAcked(acked map[string]chaosAck) []embedcheck.Record {
	type ack struct {
		producer, seq int
		rec           embedcheck.Record
	}
	var acks []ack
	for v, a := range acked {
		producer, seq, ok := parseChaosValue(v)
		if !ok {
			panic(fmt.Sprintf("acknowledged value %q was not made by chaosValue", v))
		}
		acks = append(acks, ack{producer, seq, embedcheck.Record{Topic: chaosTopic, Partition: a.Partition, Offset: a.Offset,
			Value: []byte(v), Producer: fmt.Sprintf("p%d", producer)}})
	}
	slices.SortFunc(acks, func(a, b ack) int { return cmp.Or(cmp.Compare(a.producer, b.producer), cmp.Compare(a.seq, b.seq)) })
	out := make([]embedcheck.Record, len(acks))
	for i, a := range acks {
		out[i] = a.rec
	}
	return out
}
