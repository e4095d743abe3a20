package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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

	"github.com/silkworm/silkworm/embed"
	"github.com/silkworm/silkworm/embed/check"
)

const (
	topic      = "chaos"
	partitions = 3
	producers  = 2
	nodes      = 3
	// recoverTimeout bounds the wait for a healed cluster to have every
	// replica back in the ISR.
	recoverTimeout = 60 * time.Second
)

// fault is one kind of fault of the embed package: inject breaks victim
// (and, for a split, its peer); heal undoes it. After heal the test
// restarts any node that is not running (killed, stopped, or stopped by
// itself after its log dir went offline) and waits for the ISR.
type fault struct {
	name   string
	inject func(c *embed.Cluster, rng *rand.Rand, victim, peer int32) (string, error)
	heal   func(c *embed.Cluster, victim int32) error
	// hold is how long the fault lasts at most (it lasts at least
	// minHold). Process and network faults may outlast the embedding
	// defaults' broker.session.timeout.ms (3 s, then the controller
	// fences the node and moves its leaderships) and
	// replica.lag.time.max.ms (2 s, then followers leave the ISR).
	hold time.Duration
	// stops: the fault makes the victim stop by itself (a write fails,
	// its log dir goes offline, the broker stops). It is held until the
	// node has stopped instead of for a random time; every node writes
	// all the time (RF 3, producers on every partition), so a node still
	// running after stopTimeout is a test failure.
	stops bool
}

const (
	minHold     = 300 * time.Millisecond
	stopTimeout = 15 * time.Second
)

func healNetworkAndDisks(c *embed.Cluster, _ int32) error { c.Heal(); return nil }

func restart(c *embed.Cluster, victim int32) error { return c.Restart(victim) }

// faults is every fault kind the embed package offers.
var faults = []fault{
	{"kill", func(c *embed.Cluster, _ *rand.Rand, v, _ int32) (string, error) {
		return "kill -9", c.Kill(v)
	}, restart, 4 * time.Second, false},
	{"controlled shutdown", func(c *embed.Cluster, _ *rand.Rand, v, _ int32) (string, error) {
		return "stop", c.Stop(v)
	}, restart, 4 * time.Second, false},
	{"isolate", func(c *embed.Cluster, _ *rand.Rand, v, _ int32) (string, error) {
		return "isolate", c.Isolate(v)
	}, healNetworkAndDisks, 5 * time.Second, false},
	{"split", func(c *embed.Cluster, _ *rand.Rand, v, p int32) (string, error) {
		// A partial partition: v and p cannot reach each other, both
		// still reach the third node.
		return fmt.Sprintf("split from node %d", p), c.Split([]int32{v}, []int32{p})
	}, healNetworkAndDisks, 5 * time.Second, false},
	{"latency", func(c *embed.Cluster, rng *rand.Rand, v, _ int32) (string, error) {
		d := time.Duration(10+rng.IntN(90)) * time.Millisecond
		return fmt.Sprintf("latency %v", d), c.Latency(v, d)
	}, healNetworkAndDisks, 3 * time.Second, false},
	{"slow disk", func(c *embed.Cluster, rng *rand.Rand, v, _ int32) (string, error) {
		d := time.Duration(5+rng.IntN(45)) * time.Millisecond
		return fmt.Sprintf("slow disk %v", d), c.SlowDisk(v, d)
	}, healNetworkAndDisks, 3 * time.Second, false},
	{"failing disk", func(c *embed.Cluster, _ *rand.Rand, v, _ int32) (string, error) {
		return "EIO on write and fsync", c.FailDisk(v)
	}, healNetworkAndDisks, 2 * time.Second, true},
	{"full disk", func(c *embed.Cluster, _ *rand.Rand, v, _ int32) (string, error) {
		return "ENOSPC on write", c.FullDisk(v)
	}, healNetworkAndDisks, 2 * time.Second, true},
	{"torn write", func(c *embed.Cluster, rng *rand.Rand, v, _ int32) (string, error) {
		n := rng.IntN(200)
		return fmt.Sprintf("torn write after %d bytes", n), c.TornWrite(v, n)
	}, healNetworkAndDisks, 2 * time.Second, true},
}

// TestEmbedChaos is issue 14's chaos test: every fault kind of the embed
// package, in a random order from a fixed seed, on a three-node cluster
// under idempotent acks=all producers; no acknowledged record may be lost,
// misplaced, doubled or reordered.
func TestEmbedChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test takes about a minute")
	}
	seed := envInt(t, "SILKWORM_CHAOS_SEED", 14)
	budget := time.Duration(envInt(t, "SILKWORM_CHAOS_SECONDS", 45)) * time.Second
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d (SILKWORM_CHAOS_SEED), faults for at least %v (SILKWORM_CHAOS_SECONDS) and one of each kind", seed, budget)
	began := time.Now()

	logs := &logBuffer{}
	c, err := embed.NewCluster(
		embed.Brokers(nodes),
		embed.Dir(t.TempDir()),
		embed.BrokerConfig("min.insync.replicas", "2"),
		embed.SeedTopic(embed.Topic{Name: topic, Partitions: partitions, ReplicationFactor: nodes,
			Configs: map[string]string{"min.insync.replicas": "2"}}),
		embed.Logger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close cluster: %v", err)
		}
		if t.Failed() {
			t.Logf("broker warnings and errors, last lines:\n%s", logs.tail(80))
		}
	})
	t.Logf("three nodes up, %s in sync, after %v", topic, time.Since(began).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), budget+5*time.Minute)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)

	// The workload: each producer writes unique values round-robin over
	// the partitions until stop is closed.
	stop := make(chan struct{})
	stopProducers := sync.OnceFunc(func() { close(stop) })
	defer stopProducers() // on a fatal error mid-way
	var wg sync.WaitGroup
	var acks []*check.Acks
	var flushMu sync.Mutex
	var flushErrs []error
	for i := range producers {
		a := &check.Acks{Producer: fmt.Sprintf("p%d", i)}
		acks = append(acks, a)
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(c.Addrs()...),
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.RequiredAcks(kgo.AllISRAcks()), // idempotent: franz-go's default
			kgo.ProducerLinger(5*time.Millisecond),
			kgo.MaxBufferedRecords(2000),
			kgo.MetadataMinAge(100*time.Millisecond),
		)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		wg.Go(func() {
			if err := produce(cl, a, stop); err != nil {
				flushMu.Lock()
				flushErrs = append(flushErrs, fmt.Errorf("producer %s: %w", a.Producer, err))
				flushMu.Unlock()
			}
		})
	}

	// The schedule: rounds of every fault kind in a random order, until
	// the budget is spent (at least one round).
	injected := map[string]int{}
	n := 0
	for round := 0; round == 0 || time.Since(began) < budget; round++ {
		for _, i := range rng.Perm(len(faults)) {
			f := faults[i]
			n++
			victim, peer, role, before, err := pickVictim(ctx, adm, rng)
			if err != nil {
				t.Fatalf("fault %d: %v", n, err)
			}
			at := time.Since(began)
			what, err := f.inject(c, rng, victim, peer)
			if err != nil {
				t.Fatalf("fault %d: %s on node %d: %v", n, f.name, victim, err)
			}
			injected[f.name]++
			// Hold the fault while the producers run; this paces the
			// schedule, it waits for no outcome.
			hold := minHold + time.Duration(rng.Int64N(int64(f.hold-minHold)))
			if f.stops {
				injectedAt := time.Now()
				if !waitStopped(c, victim) {
					t.Errorf("fault %d: %s on node %d: the node still runs %v later; its writes did not fail", n, f.name, victim, stopTimeout)
				}
				hold = time.Since(injectedAt)
			} else {
				time.Sleep(hold)
			}
			healed := time.Now()
			if err := f.heal(c, victim); err != nil {
				t.Fatalf("fault %d: heal %s on node %d: %v", n, f.name, victim, err)
			}
			restarted, err := recoverCluster(ctx, c)
			if err != nil {
				t.Fatalf("fault %d: %s on node %d: cluster did not recover: %v", n, f.name, victim, err)
			}
			recovered := time.Since(healed)
			after, err := leaderEpochs(ctx, adm)
			if err != nil {
				t.Fatalf("fault %d: %v", n, err)
			}
			t.Logf("fault %d at %v: node %d (%s): %s for %v; %s; every replica in the ISR %v after healing; leader epochs %v -> %v",
				n, at.Round(time.Millisecond), victim, role, what, hold.Round(time.Millisecond), restartedNote(restarted), recovered.Round(time.Millisecond), before, after)
		}
	}

	stopProducers()
	wg.Wait()
	for _, err := range flushErrs {
		t.Error(err)
	}
	if _, err := recoverCluster(ctx, c); err != nil {
		t.Fatalf("after the faults: %v", err)
	}

	var acked []check.Record
	failed := map[string]int{}
	for _, a := range acks {
		acked = append(acked, a.Records()...)
		for msg, k := range a.Failed() {
			failed[msg] += k
		}
	}
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer rcancel()
	report, err := check.Verify(rctx, acked, kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatalf("read back: %v", err)
	}

	var kinds, failures []string
	for _, name := range slices.Sorted(maps.Keys(injected)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", name, injected[name]))
	}
	for _, msg := range slices.Sorted(maps.Keys(failed)) {
		failures = append(failures, fmt.Sprintf("%d× %s", failed[msg], msg))
	}
	t.Logf("seed %d: %d faults in %v (%s)", seed, n, time.Since(began).Round(time.Millisecond), strings.Join(kinds, ", "))
	t.Logf("%d records acknowledged, %d failed to the producers %v", len(acked), sum(failed), failures)
	t.Logf("check: %s", report)
	for _, f := range faults {
		if injected[f.name] == 0 {
			t.Errorf("fault kind %q was never injected", f.name)
		}
	}
	if len(acked) == 0 {
		t.Error("no record was acknowledged")
	}
	if err := report.Err(); err != nil {
		t.Error(err)
	}
}

// produce writes unique values, 5 every 10 ms (about 500 a second),
// round-robin over the partitions, until stop is closed, then flushes.
// TryProduce never blocks: while the cluster cannot take records, those
// over the buffer fail to the producer (and the check allows them once).
func produce(cl *kgo.Client, acks *check.Acks, stop <-chan struct{}) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	ctx := context.Background()
	for seq := 0; ; {
		select {
		case <-stop:
			fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			return cl.Flush(fctx)
		case <-tick.C:
		}
		for range 5 {
			cl.TryProduce(ctx, &kgo.Record{
				Partition: int32(seq % partitions),
				Value:     fmt.Appendf(nil, "%s-%09d", acks.Producer, seq),
			}, acks.Promise)
			seq++
		}
	}
}

// pickVictim chooses the node to break: half of the time the leader of a
// random partition, else a random node; peer is another node (the other
// side of a split). role says which it was, and epochs are the leader
// epochs of the partitions, for the log.
func pickVictim(ctx context.Context, adm *kadm.Client, rng *rand.Rand) (victim, peer int32, role string, epochs []int32, err error) {
	md, err := metadata(ctx, adm)
	if err != nil {
		return 0, 0, "", nil, err
	}
	epochs = epochsOf(md)
	victim = int32(1 + rng.IntN(nodes))
	role = "random node"
	if rng.IntN(2) == 0 {
		p := int32(rng.IntN(partitions))
		if pd, ok := md.Partitions[p]; ok && pd.Leader > 0 {
			victim, role = pd.Leader, fmt.Sprintf("leader of %s-%d", topic, p)
		}
	}
	peer = 1 + (victim-1+int32(1+rng.IntN(nodes-1)))%nodes
	return victim, peer, role, epochs, nil
}

// metadata is what the cluster says of the topic.
func metadata(ctx context.Context, adm *kadm.Client) (kadm.TopicDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		return kadm.TopicDetail{}, fmt.Errorf("metadata of %s: %v", topic, td.Err)
	}
	return td, nil
}

// leaderEpochs are the leader epochs of the topic's partitions.
func leaderEpochs(ctx context.Context, adm *kadm.Client) ([]int32, error) {
	md, err := metadata(ctx, adm)
	if err != nil {
		return nil, err
	}
	return epochsOf(md), nil
}

func epochsOf(td kadm.TopicDetail) []int32 {
	epochs := make([]int32, partitions)
	for p := range int32(partitions) {
		epochs[p] = td.Partitions[p].LeaderEpoch
	}
	return epochs
}

// recoverCluster waits until every replica of the topic is in the ISR,
// restarting any node that is not running: killed or stopped by the
// schedule, or stopped by itself after its log dir went offline (a disk
// fault; Running waits while such a stop is under way). It returns the
// nodes it restarted.
func recoverCluster(ctx context.Context, c *embed.Cluster) ([]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	var restarted []int32
	var last error
	for {
		for id := int32(1); id <= nodes; id++ {
			if c.Running(id) {
				continue
			}
			if err := c.Restart(id); err != nil {
				last = fmt.Errorf("restart node %d: %w", id, err)
				continue
			}
			restarted = append(restarted, id)
		}
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.WaitISR(wctx, topic)
		wcancel()
		if err == nil {
			return restarted, nil
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			last = err
		}
		if ctx.Err() != nil {
			return restarted, fmt.Errorf("after %v: %w (last: %v)", recoverTimeout, ctx.Err(), last)
		}
	}
}

// waitStopped polls until node has stopped, for at most stopTimeout.
func waitStopped(c *embed.Cluster, node int32) bool {
	deadline := time.Now().Add(stopTimeout)
	for c.Running(node) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func restartedNote(ids []int32) string {
	if len(ids) == 0 {
		return "no node had stopped"
	}
	return fmt.Sprintf("node %v had stopped, restarted", ids)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative number", name, v)
	}
	return n
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// logBuffer keeps the brokers' log for a failed test. Safe for concurrent
// use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 4<<20 { // keep the newest half
		keep := slices.Clone(b.buf.Bytes()[b.buf.Len()/2:])
		b.buf.Reset()
		b.buf.Write(keep)
	}
	return b.buf.Write(p)
}

// tail is the last n lines.
func (b *logBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimRight(b.buf.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
