package interop

// Failover with Kafka's default timeouts (issue 15, item 4): a SIGKILLed
// leader is fenced as soon as its controller session closes, not after
// broker.session.timeout.ms (9 s); a leader that is only paused (SIGSTOP)
// keeps its session, so it is not fenced and nothing fails over.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// fenceLogLine is what the active controller logs when it fences a
// broker because its process is gone (internal/metadata/session.go).
const fenceLogLine = "fencing broker whose process is gone"

func TestFailoverDefaultTimeouts(t *testing.T) {
	c := startProcessCluster(t, 3, "group.initial.rebalance.delay.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.Client(t))
	const topic = "failover"
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic); err != nil {
		t.Fatal(err)
	}
	if err := waitFullISR(ctx, adm, topic, 1, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	cl := c.Client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func() error {
		pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
		defer pcancel()
		for {
			_, err := cl.ProduceSync(pctx, &kgo.Record{Value: []byte("x")}).First()
			if err == nil || pctx.Err() != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := produce(); err != nil {
		t.Fatal(err)
	}

	// A paused leader: SIGSTOP for a second, then SIGCONT. Its session
	// stays open; the partition keeps its leader and leader epoch.
	before, err := partitionDetail(ctx, adm, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	paused := c.Node(t, before.Leader)
	if err := paused.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the pause under test
	if err := paused.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := produce(); err != nil {
		t.Fatal(err)
	}
	after, err := partitionDetail(ctx, adm, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.Leader != before.Leader || after.LeaderEpoch != before.LeaderEpoch {
		t.Errorf("a 1 s pause of node %d failed over: leader %d epoch %d → leader %d epoch %d",
			paused.ID, before.Leader, before.LeaderEpoch, after.Leader, after.LeaderEpoch)
	}
	for _, n := range c.Nodes {
		if strings.Contains(readFile(n.Log), fenceLogLine) {
			t.Errorf("node %d fenced a broker during a 1 s pause:\n%s", n.ID, testcluster.Tail(n.Log, 40))
		}
	}

	// Killed leaders: each is fenced because its process is gone, and a
	// produce is acknowledged by the new leader (times logged).
	for fault := 1; fault <= 3; fault++ {
		pd, err := partitionDetail(ctx, adm, topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		victim := c.Node(t, pd.Leader)
		role := "not the active controller"
		if m, err := adm.BrokerMetadata(ctx); err == nil && m.Controller == victim.ID {
			role = "the active controller"
		}
		logged := map[int32]int{} // log sizes before the kill
		for _, n := range c.Nodes {
			logged[n.ID] = len(readFile(n.Log))
		}
		victim.Kill(t)
		killed := time.Now()
		if err := produce(); err != nil {
			t.Fatalf("fault %d: no produce acknowledged after killing leader %d: %v", fault, victim.ID, err)
		}
		t.Logf("fault %d: killed leader %d (epoch %d, %s): first acks=all produce acknowledged after %v",
			fault, victim.ID, pd.LeaderEpoch, role, time.Since(killed).Round(time.Millisecond))
		if err := testcluster.Poll(30*time.Second, func() error {
			for _, n := range c.Nodes {
				if at, ok := loggedFence(readFile(n.Log)[logged[n.ID]:], victim.ID); n != victim && ok {
					t.Logf("fault %d: node %d fenced broker %d %v after the kill", fault, n.ID, victim.ID, at.Sub(killed).Round(time.Millisecond))
					return nil
				}
			}
			return fmt.Errorf("no controller logged %q for broker %d", fenceLogLine, victim.ID)
		}); err != nil {
			t.Errorf("fault %d: %v", fault, err)
		}
		victim.Start(t)
		if err := waitFullISR(ctx, adm, topic, 1, 60*time.Second); err != nil {
			t.Fatalf("fault %d: %v", fault, err)
		}
	}
}

// loggedFence finds the controller's line fencing broker id because its
// process is gone, and returns the time it was logged at.
func loggedFence(log string, id int32) (time.Time, bool) {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, fenceLogLine) && strings.Contains(line+" ", fmt.Sprintf(" broker=%d ", id)) {
			var at time.Time
			if f := strings.Fields(line); len(f) > 0 {
				at, _ = time.Parse(time.RFC3339Nano, strings.TrimPrefix(f[0], "time="))
			}
			return at, true
		}
	}
	return time.Time{}, false
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
