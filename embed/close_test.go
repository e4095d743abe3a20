package embed

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Close leaves no goroutine behind, whatever state the cluster is in: a
// node killed, one isolated, delayed bytes on the wire, a slow disk, a
// producer's connections open.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	verifyNone(t)
	c := newCluster(t, Brokers(3), BrokerConfig("min.insync.replicas", "2"), SeedTopics(1, "orders"))
	ctx := testCtx(t)
	p := newProducer(t, c, "orders", kgo.ProduceRequestTimeout(time.Second))
	p.produce(ctx, 0, 10)
	if err := c.Latency(1, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.SlowDisk(2, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	p.produce(ctx, 10, 15)
	if err := c.Kill(3); err != nil {
		t.Fatal(err)
	}
	if err := c.Isolate(2); err != nil {
		t.Fatal(err)
	}
	p.cl.Close()
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if c.Running(1) || c.Restart(1) == nil {
		t.Fatal("a closed cluster runs or restarts a node")
	}
}
