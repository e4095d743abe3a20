package leaderelection

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
)

// TestPreferredElectionAfterRestart restarts the preferred leader of a
// partition on a three-node cluster (its leadership moves away), then
// runs a preferred election that moves it back, as operators do after a
// rolling restart.
func TestPreferredElectionAfterRestart(t *testing.T) {
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3),
		embed.BrokerConfig("auto.leader.rebalance.enable", "false"),
		embed.SeedTopic(embed.Topic{Name: "orders", Partitions: 1, ReplicationFactor: 3}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	partition := func() kadm.PartitionDetail {
		t.Helper()
		for {
			td, err := adm.ListTopics(ctx, "orders")
			if err == nil && td["orders"].Err == nil && len(td["orders"].Partitions) == 1 {
				return td["orders"].Partitions[0]
			}
			if ctx.Err() != nil {
				t.Fatalf("describe orders: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// waitFor polls the partition until ok holds.
	waitFor := func(what string, ok func(kadm.PartitionDetail) bool) kadm.PartitionDetail {
		t.Helper()
		for {
			p := partition()
			if ok(p) {
				return p
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: partition stays %+v", what, p)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	p := waitFor("full ISR", func(p kadm.PartitionDetail) bool { return len(p.ISR) == 3 && p.Leader >= 0 })
	preferred := p.Replicas[0]

	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", c.Addrs()[0]}, args...), &out, &errOut)
		return out.String(), err
	}
	// Leadership must be on the preferred replica first: if the cluster
	// started with another leader, an election puts it there.
	if p.Leader != preferred {
		if _, err := run("--election-type", "preferred", "--topic", "orders", "--partition", "0"); err != nil {
			t.Fatal(err)
		}
		waitFor("preferred leader", func(p kadm.PartitionDetail) bool { return p.Leader == preferred })
	}
	if out, err := run("--election-type", "preferred", "--topic", "orders", "--partition", "0"); err != nil ||
		out != "Valid replica already elected for partitions orders-0\n" {
		t.Fatalf("election on the preferred leader: %q %v", out, err)
	}

	if err := c.Restart(preferred); err != nil {
		t.Fatal(err)
	}
	p = waitFor("restarted replica back in the ISR", func(p kadm.PartitionDetail) bool {
		return len(p.ISR) == 3 && p.Leader >= 0 && p.Leader != preferred
	})
	t.Logf("after restarting %d: leader %d, ISR %v", preferred, p.Leader, p.ISR)

	out, err := run("--election-type", "PREFERRED", "--topic", "orders", "--partition", "0")
	if err != nil || out != "Successfully completed leader election (PREFERRED) for partitions orders-0\n" {
		t.Fatalf("preferred election: %q %v", out, err)
	}
	p = waitFor("leadership back on the preferred replica", func(p kadm.PartitionDetail) bool { return p.Leader == preferred })
	if !slices.Contains(p.ISR, preferred) {
		t.Errorf("ISR %v lacks the leader %d", p.ISR, preferred)
	}
	// Every partition now has its preferred leader: nothing to elect, and
	// Kafka lists no partition that needed no election.
	if out, err := run("--election-type", "preferred", "--all-topic-partitions"); err != nil || out != "" {
		t.Errorf("all partitions: %q %v", out, err)
	}
	// An unclean election on a partition that has a leader is not needed.
	if out, err := run("--election-type", "unclean", "--topic", "orders", "--partition", "0"); err != nil ||
		out != "Valid replica already elected for partitions orders-0\n" {
		t.Errorf("unclean election: %q %v", out, err)
	}
	// An unknown partition fails with Kafka's lines and error.
	out, err = run("--election-type", "preferred", "--topic", "orders", "--partition", "7")
	if err == nil || err.Error() != "1 replica(s) could not be elected" ||
		!bytes.HasPrefix([]byte(out), []byte("Error completing leader election (PREFERRED) for partition: orders-7: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ")) {
		t.Errorf("unknown partition: %q %v", out, err)
	}
}
