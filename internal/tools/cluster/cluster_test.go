package cluster

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/embed"
	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func TestEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	meta, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(ctx, args, &out, &errOut)
		return out.String(), err
	}
	if out, err := run("cluster-id", "--bootstrap-server", addr); err != nil || out != "Cluster ID: "+meta.Cluster+"\n" || meta.Cluster == "" {
		t.Errorf("cluster-id: %q %v (cluster %q)", out, err, meta.Cluster)
	}
	if out, err := run("-b", addr, "cluster-id"); err != nil || !strings.HasPrefix(out, "Cluster ID: ") {
		t.Errorf("cluster-id -b: %q %v", out, err)
	}
	// A single node knows only itself.
	if out, err := run("unregister", "--bootstrap-server", addr, "--id", "1"); err != nil || out != "Broker 1 is no longer registered.\n" {
		t.Errorf("unregister 1: %q %v", out, err)
	}
	if out, err := run("unregister", "--bootstrap-server", addr, "--id", "2"); err == nil || out != "" ||
		err.Error() != "org.apache.kafka.common.errors.BrokerIdNotRegisteredException: Broker ID 2 is not currently registered" {
		t.Errorf("unregister 2: %q %v", out, err)
	}
}

// TestUnregisterThreeNodes unregisters a running broker of a three-node
// cluster: as in Kafka it is not refused, loses its registration (the
// partitions it led get other leaders) and registers again at its next
// heartbeat.
func TestUnregisterThreeNodes(t *testing.T) {
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3),
		embed.BrokerConfig("auto.leader.rebalance.enable", "false"),
		embed.SeedTopic(embed.Topic{Name: "orders", Partitions: 3, ReplicationFactor: 3}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// poll waits until ok holds for the partitions of orders.
	poll := func(what string, ok func(ps kadm.PartitionDetails) bool) {
		t.Helper()
		for {
			td, err := adm.ListTopics(ctx, "orders")
			if err == nil && td["orders"].Err == nil && ok(td["orders"].Partitions) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v %+v", what, err, td)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Give broker 3 a leadership: every partition fully replicated, then
	// partition 0 elected onto 3 if it is not there.
	poll("full ISRs", func(ps kadm.PartitionDetails) bool {
		for _, p := range ps {
			if len(p.ISR) != 3 || p.Leader < 0 {
				return false
			}
		}
		return len(ps) == 3
	})
	leadsOn3 := func(ps kadm.PartitionDetails) bool {
		for _, p := range ps {
			if p.Leader == 3 {
				return true
			}
		}
		return false
	}
	if td, _ := adm.ListTopics(ctx, "orders"); !leadsOn3(td["orders"].Partitions) {
		t.Skip("broker 3 leads no partition of orders") // placement is round-robin: it always leads one
	}

	var out, errOut bytes.Buffer
	if err := Run(ctx, []string{"unregister", "--bootstrap-server", c.Addr(1), "--id", "3"}, &out, &errOut); err != nil ||
		out.String() != "Broker 3 is no longer registered.\n" {
		t.Fatalf("unregister 3: %q %v", out.String(), err)
	}
	poll("leadership moved off the unregistered broker", func(ps kadm.PartitionDetails) bool { return !leadsOn3(ps) })
	out.Reset()
	err = Run(ctx, []string{"unregister", "--bootstrap-server", c.Addr(2), "--id", "9"}, &out, &errOut)
	if err == nil || err.Error() != "org.apache.kafka.common.errors.BrokerIdNotRegisteredException: Broker ID 9 is not currently registered" {
		t.Errorf("unregister 9: %v", err)
	}
	// Broker 3 registers again and rejoins every ISR.
	poll("broker 3 back in every ISR", func(ps kadm.PartitionDetails) bool {
		for _, p := range ps {
			if len(p.ISR) != 3 {
				return false
			}
		}
		return true
	})
	req := kmsg.NewPtrDescribeClusterRequest()
	if resp, err := req.RequestWith(ctx, cl.Broker(1)); err != nil || len(resp.Brokers) != 3 {
		t.Errorf("brokers after re-registration: %+v %v", resp, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "a command is required"},
		{[]string{"describe", "--bootstrap-server", "x:1"}, "invalid choice: 'describe'"},
		{[]string{"cluster-id"}, "exactly one of --bootstrap-server, --bootstrap-controller"},
		{[]string{"unregister", "--bootstrap-server", "x:1"}, "argument --id/-i is required"},
		{[]string{"unregister", "--bootstrap-server", "x:1", "--id", "x"}, "not an integer"},
	} {
		var out bytes.Buffer
		err := Run(context.Background(), tc.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	msg := "Broker ID 9 is not currently registered"
	if err := errWithMessage(kerr.BrokerIDNotRegistered.Code, &msg); err == nil ||
		err.Error() != "org.apache.kafka.common.errors.BrokerIdNotRegisteredException: Broker ID 9 is not currently registered" {
		t.Errorf("error text: %v", err)
	}
}
