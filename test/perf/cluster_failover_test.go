package perf

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// failoverRow is one kill of TestClusterFailover.
type failoverRow struct {
	victim     int32
	controller bool          // the victim was the active controller
	elected    time.Duration // kill to Metadata naming another leader
	acked      time.Duration // kill to the first acks=all produce acknowledged
	rejoined   time.Duration // restart of the victim to a full ISR again
}

// TestClusterFailover measures issue #15's failover figure on a 3-node
// cluster with the brokers' default timeouts: a one-partition RF 3 topic
// (min.insync.replicas=2); first its leader is paused with SIGSTOP for
// SILKWORM_PERF_PAUSE_MS (default 1000) and resumed, and the test reports
// how long a produce sent at the pause took and whether leadership moved
// (it should not); then SILKWORM_PERF_FAULTS times (default 3) the current
// leader is killed with SIGKILL, and the test reports the time from the
// kill until Metadata names another leader and until the first acks=all
// produce is acknowledged, then restarts the victim and reports the time
// until it is back in the ISR. The producer refreshes metadata at most
// every 100 ms, as Kafka's Java client does after a NOT_LEADER error
// (retry.backoff.ms).
func TestClusterFailover(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	faults := envInt(t, "SILKWORM_PERF_FAULTS", 3)
	pause := time.Duration(envInt(t, "SILKWORM_PERF_PAUSE_MS", 1000)) * time.Millisecond

	c := startPerfCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	adm := c.admin(t)
	const topic = "failover"
	minISR := "2"
	c.createTopic(ctx, t, adm, topic, 1, 3, map[string]*string{"min.insync.replicas": &minISR})
	prod := c.Client(t,
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(100*time.Millisecond),
	)
	// produce sends one record and retries until it is acknowledged.
	produce := func() error {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
		defer pcancel()
		for {
			err := prod.ProduceSync(pctx, &kgo.Record{Value: []byte("failover")}).FirstErr()
			if err == nil || pctx.Err() != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond) // retry interval, not a wait for an outcome
		}
	}
	if err := produce(); err != nil {
		t.Fatalf("first produce: %v", err)
	}

	// The pause.
	before := leaderOf(ctx, t, adm, topic)
	paused := c.Node(t, before.Leader)
	if err := paused.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stop node %d: %v", paused.ID, err)
	}
	stopped := time.Now()
	ackedCh := make(chan error, 1)
	go func() { ackedCh <- produce() }()
	time.Sleep(pause) // the pause measured, not a wait for an outcome
	if err := paused.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("resume node %d: %v", paused.ID, err)
	}
	if err := <-ackedCh; err != nil {
		t.Fatalf("produce during the pause: %v", err)
	}
	pauseAck := time.Since(stopped)
	after := leaderOf(ctx, t, adm, topic)
	moved := after.Leader != before.Leader || after.LeaderEpoch != before.LeaderEpoch

	var rows []failoverRow
	for fault := 1; fault <= faults; fault++ {
		pd := leaderOf(ctx, t, adm, topic)
		victim := c.Node(t, pd.Leader)
		row := failoverRow{victim: victim.ID}
		if m, err := adm.BrokerMetadata(ctx); err == nil && m.Controller == victim.ID {
			row.controller = true
		}
		var survivors []string
		for _, n := range c.Nodes {
			if n != victim {
				survivors = append(survivors, n.Addr)
			}
		}
		watcher, err := kgo.NewClient(kgo.SeedBrokers(survivors...), kgo.MetadataMinAge(adminMetadataMinAge))
		if err != nil {
			t.Fatalf("metadata client: %v", err)
		}
		wadm := kadm.NewClient(watcher)
		electedCh := make(chan time.Time, 1)
		killed := time.Now()
		victim.Kill(t)
		go func() {
			// Polls from another goroutine while this one produces; it
			// only uses its own client.
			err := testcluster.Poll(2*time.Minute, func() error {
				mctx, mcancel := context.WithTimeout(ctx, time.Second)
				defer mcancel()
				md, err := wadm.Metadata(mctx, topic)
				if err != nil {
					return err
				}
				p, ok := md.Topics[topic].Partitions[0]
				if !ok || p.Leader < 0 || p.Leader == victim.ID || p.LeaderEpoch <= pd.LeaderEpoch {
					return fmt.Errorf("no new leader yet")
				}
				return nil
			})
			if err != nil {
				close(electedCh)
				return
			}
			electedCh <- time.Now()
		}()
		if err := produce(); err != nil {
			t.Fatalf("fault %d: no produce acknowledged after killing leader %d: %v", fault, victim.ID, err)
		}
		row.acked = time.Since(killed)
		at, ok := <-electedCh
		watcher.Close()
		if !ok {
			t.Fatalf("fault %d: Metadata named no new leader within 2 minutes", fault)
		}
		row.elected = at.Sub(killed)
		restarted := time.Now()
		victim.Start(t)
		if err := testcluster.Poll(2*time.Minute, func() error { return topicLed(ctx, adm, topic, 1, true) }); err != nil {
			t.Fatalf("fault %d: node %d did not rejoin the ISR: %v", fault, victim.ID, err)
		}
		row.rejoined = time.Since(restarted)
		rows = append(rows, row)
		t.Logf("fault %d: killed leader %d: new leader after %v, first acks=all ack after %v, back in the ISR %v after its restart",
			fault, victim.ID, row.elected.Round(time.Millisecond), row.acked.Round(time.Millisecond), row.rejoined.Round(time.Millisecond))
	}
	fmt.Println(failoverTable(paused.ID, pause, pauseAck, moved, before, after, rows))
}

// leaderOf is the Metadata of partition 0 of topic, which must have a
// leader.
func leaderOf(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.PartitionDetail {
	t.Helper()
	var pd kadm.PartitionDetail
	err := testcluster.Poll(time.Minute, func() error {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(mctx, topic)
		if err != nil {
			return err
		}
		p, ok := md.Topics[topic].Partitions[0]
		if !ok || p.Leader < 0 {
			return fmt.Errorf("%s-0 has no leader", topic)
		}
		pd = p
		return nil
	})
	if err != nil {
		t.Fatalf("leader of %s-0: %v", topic, err)
	}
	return pd
}

func failoverTable(paused int32, pause, pauseAck time.Duration, moved bool, before, after kadm.PartitionDetail, rows []failoverRow) string {
	var sb strings.Builder
	sb.WriteString("3-node cluster, default broker timeouts, one partition, RF 3, min.insync.replicas=2, acks=all. Times in s.\n\n")
	sb.WriteString("| pause | node | paused s | produce sent at the pause acked after s | leadership moved |\n")
	sb.WriteString("|---|---:|---:|---:|---|\n")
	movedText := "no"
	if moved {
		movedText = fmt.Sprintf("yes: leader %d epoch %d → leader %d epoch %d", before.Leader, before.LeaderEpoch, after.Leader, after.LeaderEpoch)
	}
	fmt.Fprintf(&sb, "| SIGSTOP | %d | %.2f | %.2f | %s |\n\n", paused, pause.Seconds(), pauseAck.Seconds(), movedText)
	sb.WriteString("| kill | victim | victim was controller | new leader in Metadata s | first acks=all produce acked s (goal ≤ 2) | back in ISR after restart s |\n")
	sb.WriteString("|---|---:|---|---:|---:|---:|\n")
	for i, r := range rows {
		fmt.Fprintf(&sb, "| SIGKILL %d | %d | %v | %.2f | %.2f | %.2f |\n",
			i+1, r.victim, r.controller, r.elected.Seconds(), r.acked.Seconds(), r.rejoined.Seconds())
	}
	if len(rows) > 1 {
		acked := make([]time.Duration, len(rows))
		for i, r := range rows {
			acked[i] = r.acked
		}
		slices.Sort(acked)
		fmt.Fprintf(&sb, "\nFirst acks=all produce after a kill: median %.2f s, max %.2f s over %d kills.\n",
			percentile(acked, 0.5).Seconds(), acked[len(acked)-1].Seconds(), len(rows))
	}
	return sb.String()
}
