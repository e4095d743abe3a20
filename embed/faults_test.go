package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A killed single broker restarts on its data: the kill left no
// clean-shutdown marker (nothing was flushed or closed after it), and every
// acknowledged record is read back after recovery.
func TestKillRestartOneBroker(t *testing.T) {
	c := newCluster(t, SeedTopics(1, "k"))
	ctx := testCtx(t)
	p := newProducer(t, c, "k")
	p.produce(ctx, 0, 20)
	if err := c.Kill(1); err != nil {
		t.Fatal(err)
	}
	if c.Running(1) {
		t.Fatal("node 1 runs after Kill")
	}
	if cleanShutdown(c, 1) {
		t.Fatal("a killed broker wrote its clean-shutdown marker")
	}
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	p.produce(ctx, 20, 30)
	checkAcked(t, ctx, c, "k", p.acked)
	// Stop is a clean shutdown.
	if err := c.Stop(1); err != nil {
		t.Fatal(err)
	}
	if !cleanShutdown(c, 1) {
		t.Fatal("a stopped broker left no clean-shutdown marker")
	}
}

// Killing the leader of a three-replica partition under acks=all: the
// producer fails over, the killed node restarts and catches up, and every
// acknowledged record is there once, in order.
func TestKillLeaderRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(1, "orders"))
	ctx := testCtx(t)
	p := newProducer(t, c, "orders")
	p.produce(ctx, 0, 50)
	old := leaderOf(t, ctx, c, "orders", 0, 0)
	if err := c.Kill(old); err != nil {
		t.Fatal(err)
	}
	if cleanShutdown(c, old) {
		t.Fatalf("killed node %d wrote its clean-shutdown marker", old)
	}
	p.produce(ctx, 50, 100)
	waitFor(t, "the other nodes to see a new leader", func() bool {
		l := leaderOf(t, ctx, c, "orders", 0, old)
		return l >= 0 && l != old
	})
	if err := c.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitISR(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	checkAcked(t, ctx, c, "orders", p.acked)
}

// Stop is a controlled shutdown: leadership moves away before the broker
// stops, and its logs are closed cleanly.
func TestStopMovesLeadership(t *testing.T) {
	t.Parallel()
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(1, "orders"))
	ctx := testCtx(t)
	p := newProducer(t, c, "orders")
	p.produce(ctx, 0, 10)
	old := leaderOf(t, ctx, c, "orders", 0, 0)
	if err := c.Stop(old); err != nil {
		t.Fatal(err)
	}
	if !cleanShutdown(c, old) {
		t.Fatalf("stopped node %d left no clean-shutdown marker", old)
	}
	waitFor(t, "a new leader", func() bool { return leaderOf(t, ctx, c, "orders", 0, old) != old })
	p.produce(ctx, 10, 20)
	if err := c.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitISR(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	checkAcked(t, ctx, c, "orders", p.acked)
}

// An isolated leader cannot acknowledge acks=all writes (its followers
// cannot fetch, the controller cannot hear it); the majority fences it and
// elects another leader, to which the producer fails over. After Heal the
// old leader truncates what it never committed and rejoins the ISR.
func TestIsolateLeader(t *testing.T) {
	t.Parallel()
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(1, "orders"))
	ctx := testCtx(t)
	// The isolated leader still answers clients, with metadata that names
	// itself: a short produce timeout lets the producer give up on it and
	// ask another broker sooner (a real client with defaults waits longer).
	p := newProducer(t, c, "orders", kgo.ProduceRequestTimeout(time.Second))
	p.produce(ctx, 0, 20)
	old := leaderOf(t, ctx, c, "orders", 0, 0)
	if err := c.Isolate(old); err != nil {
		t.Fatal(err)
	}
	// Straight to the isolated leader: not acknowledged.
	direct, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(old)), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(0), kgo.ProduceRequestTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.ProduceSync(ctx, kgo.StringRecord("never")).FirstErr(); err == nil {
		t.Fatalf("isolated leader %d acknowledged an acks=all write", old)
	} else {
		t.Logf("produce to the isolated leader: %v", err)
	}
	// Through the cluster: fails over to a leader the majority elected.
	p.produce(ctx, 20, 40)
	waitFor(t, "the majority to see a new leader", func() bool {
		l := leaderOf(t, ctx, c, "orders", 0, old)
		return l >= 0 && l != old
	})
	c.Heal()
	if err := c.WaitISR(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	p.produce(ctx, 40, 50)
	checkAcked(t, ctx, c, "orders", p.acked)
}

// FailDisk and FullDisk: the write fails, the produce gets
// KAFKA_STORAGE_ERROR, the node stops as `silkworm server` does; after Heal
// and Restart every acknowledged record is back and writes work again.
func TestDiskFailureStopsNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(c *Cluster) error
	}{
		{"FailDisk", func(c *Cluster) error { return c.FailDisk(1) }},
		{"FullDisk", func(c *Cluster) error { return c.FullDisk(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, SeedTopics(1, "disk"))
			ctx := testCtx(t)
			p := newProducer(t, c, "disk")
			p.produce(ctx, 0, 10)
			if err := tc.inject(c); err != nil {
				t.Fatal(err)
			}
			once := client(t, c, kgo.DefaultProduceTopic("disk"), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
			if err := once.ProduceSync(ctx, kgo.StringRecord("lost")).FirstErr(); !errors.Is(err, kerr.KafkaStorageError) {
				t.Fatalf("produce on a failed disk: %v, want KAFKA_STORAGE_ERROR", err)
			}
			waitFor(t, "the node to stop", func() bool { return !c.Running(1) })
			c.Heal()
			if err := c.Restart(1); err != nil {
				t.Fatal(err)
			}
			p.produce(ctx, 10, 20)
			checkAcked(t, ctx, c, "disk", p.acked)
		})
	}
}

// A torn write lands its first bytes only; the node stops, and the restart
// recovers the log by truncating the torn batch.
func TestTornWrite(t *testing.T) {
	c := newCluster(t, SeedTopics(1, "torn"))
	ctx := testCtx(t)
	p := newProducer(t, c, "torn")
	p.produce(ctx, 0, 10)
	seg := filepath.Join(c.DataDir(1), "torn-0", "00000000000000000000.log")
	before := fileSize(t, seg)
	if err := c.TornWrite(1, 7); err != nil {
		t.Fatal(err)
	}
	once := client(t, c, kgo.DefaultProduceTopic("torn"), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err := once.ProduceSync(ctx, kgo.StringRecord("torn")).FirstErr(); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce with a torn write: %v, want KAFKA_STORAGE_ERROR", err)
	}
	if got := fileSize(t, seg); got != before+7 {
		t.Fatalf("segment is %d bytes after a write torn at byte 7, was %d", got, before)
	}
	waitFor(t, "the node to stop", func() bool { return !c.Running(1) })
	c.Heal()
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, seg); got != before {
		t.Fatalf("recovered segment is %d bytes, want %d (torn batch truncated)", got, before)
	}
	p.produce(ctx, 10, 20)
	checkAcked(t, ctx, c, "torn", p.acked)
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A slow disk delays the produce that writes to it by at least the delay.
func TestSlowDisk(t *testing.T) {
	c := newCluster(t, SeedTopics(1, "slow"))
	ctx := testCtx(t)
	p := newProducer(t, c, "slow")
	p.produce(ctx, 0, 1)
	const d = 200 * time.Millisecond
	if err := c.SlowDisk(1, d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.produce(ctx, 1, 2)
	if took := time.Since(start); took < d {
		t.Fatalf("a produce on a disk slowed by %v took %v", d, took)
	}
	c.Heal()
	p.produce(ctx, 2, 10)
	checkAcked(t, ctx, c, "slow", p.acked)
}

// Latency delays everything the node sends: a produce round trip takes at
// least the delay, and what is read through the delayed (copied, not
// sendfile'd) path is intact.
func TestLatency(t *testing.T) {
	c := newCluster(t, SeedTopics(1, "lat"))
	ctx := testCtx(t)
	p := newProducer(t, c, "lat")
	p.produce(ctx, 0, 100)
	const d = 100 * time.Millisecond
	if err := c.Latency(1, d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.produce(ctx, 100, 101)
	if took := time.Since(start); took < d {
		t.Fatalf("a produce to a node with %v latency took %v", d, took)
	}
	checkAcked(t, ctx, c, "lat", p.acked)
	c.Heal()
	p.produce(ctx, 101, 110)
	checkAcked(t, ctx, c, "lat", p.acked)
}

// Split cuts one link only (a partial partition): the follower cut off
// from the leader drops out of the ISR (or the leader, cut off from a
// controller, loses leadership) while acks=all writes go on with the two
// replicas that still talk; Heal brings the ISR back to all three. Then a
// slow follower link: acks=all waits for every ISR member, so each write
// takes at least the follower's added latency.
func TestSplitAndLatency(t *testing.T) {
	t.Parallel()
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(1, "orders"))
	ctx := testCtx(t)
	p := newProducer(t, c, "orders", kgo.ProduceRequestTimeout(time.Second))
	p.produce(ctx, 0, 10)
	leader := leaderOf(t, ctx, c, "orders", 0, 0)
	follower := leader%3 + 1
	if err := c.Split([]int32{leader}, []int32{follower}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ISR to shrink", func() bool {
		p.produce(ctx, len(p.acked), len(p.acked)+1)
		return isrSize(t, ctx, c, "orders", 0) == 2
	})
	c.Heal()
	if err := c.WaitISR(ctx, "orders"); err != nil {
		t.Fatal(err)
	}

	leader = leaderOf(t, ctx, c, "orders", 0, 0)
	follower = leader%3 + 1
	const d = 100 * time.Millisecond
	if err := c.Latency(follower, d); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		start := time.Now()
		p.produce(ctx, len(p.acked), len(p.acked)+1)
		if took := time.Since(start); took < d {
			t.Fatalf("acks=all with follower %d %v away took %v", follower, d, took)
		}
	}
	c.Heal()
	if err := c.WaitISR(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	checkAcked(t, ctx, c, "orders", p.acked)
}

// isrSize is the ISR size of a partition as a broker sees it.
func isrSize(t *testing.T, ctx context.Context, c *Cluster, topic string, p int32) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadmClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return len(td[topic].Partitions[p].ISR)
}
