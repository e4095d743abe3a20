package embed

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newCluster starts a cluster closed when the test ends, logging to stderr
// when SILKWORM_TEST_LOG is set.
func newCluster(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	if os.Getenv("SILKWORM_TEST_LOG") != "" {
		opts = append(opts, Logger(slogStderr()))
	}
	start := time.Now()
	c, err := NewCluster(append([]Option{Dir(t.TempDir())}, opts...)...)
	if err != nil {
		t.Fatalf("new cluster: %v", err)
	}
	t.Logf("cluster of %d started in %v", len(c.nodes), time.Since(start))
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

func client(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestOneBrokerRoundTrip(t *testing.T) {
	c := newCluster(t, SeedTopics(2, "orders"))
	ctx := testCtx(t)
	p := newProducer(t, c, "orders")
	start := time.Now()
	p.produce(ctx, 0, 1)
	got := readAll(t, ctx, c, "orders", 1)
	t.Logf("first produce + consume round trip: %v", time.Since(start))
	if got[0] != "v00000" {
		t.Fatalf("read %q", got)
	}
	p.produce(ctx, 1, 10)
	checkAcked(t, ctx, c, "orders", p.acked)
}

func TestThreeBrokersRoundTrip(t *testing.T) {
	t.Parallel()
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(3, "orders"))
	ctx := testCtx(t)
	cl := client(t, c)
	// Every node is a broker of the cluster, at the address Addrs gives.
	md, err := kadmClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("cluster lists %d brokers", len(md.Brokers))
	}
	for _, b := range md.Brokers {
		if addr := c.Addr(b.NodeID); !strings.HasSuffix(addr, ":"+itoa(b.Port)) {
			t.Fatalf("node %d advertises port %d, Addr is %s", b.NodeID, b.Port, addr)
		}
	}
	// The seed topic is replicated on every node with the broker config.
	td, err := kadmClient(cl).ListTopics(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["orders"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("orders-%d: replicas %v, ISR %v", p.Partition, p.Replicas, p.ISR)
		}
	}
	p := newProducer(t, c, "orders")
	p.produce(ctx, 0, 30)
	checkAcked(t, ctx, c, "orders", p.acked)
}
