package groups

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

// TestConsumerGroups848 shows a KIP-848 consumer group next to a classic
// one, as kafka-consumer-groups.sh 4.x does.
func TestConsumerGroups848(t *testing.T) {
	addr := brokertest.Start(t, "group.initial.rebalance.delay.ms=0",
		"group.consumer.min.heartbeat.interval.ms=50", "group.consumer.heartbeat.interval.ms=100")
	ctx := context.Background()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	e := &groupsEnv{t: t, addr: addr, adm: kadm.NewClient(admCl)}
	if _, err := e.adm.CreateTopic(ctx, 3, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(3) {
		for range 4 {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: []byte("v")})
		}
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("events"),
		kgo.ServerSideBalancer(), kgo.ClientID("member-848"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	pollCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	for got := 0; got < 12 && pollCtx.Err() == nil; {
		got += member.PollFetches(pollCtx).NumRecords()
	}
	cancel()
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the group Stable with 3 partitions", func() bool {
		out, _, err := e.run("--describe", "--group", "g848", "--members")
		return err == nil && strings.Contains(out, "member-848") && strings.Contains(out, " 3 ")
	})

	out := e.mustRun("--list", "--type")
	rows := tableRows(t, out, "GROUP")
	if len(rows) != 1 || rows[0][0] != "g848" || rows[0][1] != "Consumer" {
		t.Fatalf("--list --type: %q", out)
	}
	if out := e.mustRun("--list", "--type", "classic"); strings.Contains(out, "g848") {
		t.Fatalf("--list --type classic lists the consumer group: %q", out)
	}

	out = e.mustRun("--describe", "--group", "g848")
	rows = tableRows(t, out, "GROUP")
	if len(rows) != 3 {
		t.Fatalf("--describe offsets: %q", out)
	}
	for _, r := range rows {
		if r[3] != "4" || r[4] != "4" || r[5] != "0" || r[8] != "member-848" {
			t.Fatalf("--describe offsets row %v in %q", r, out)
		}
	}

	out = e.mustRun("--describe", "--group", "g848", "--state", "--verbose")
	rows = tableRows(t, out, "GROUP")
	if len(rows) != 1 || rows[0][3] != "uniform" || rows[0][4] != "Stable" || rows[0][5] == "-" || rows[0][5] != rows[0][6] || rows[0][7] != "1" {
		t.Fatalf("--describe --state --verbose: %q", out)
	}

	out = e.mustRun("--describe", "--group", "g848", "--members", "--verbose")
	rows = tableRows(t, out, "GROUP")
	if len(rows) != 1 || rows[0][4] != "3" || rows[0][6] != "events(0,1,2)" || rows[0][8] != "events(0,1,2)" {
		t.Fatalf("--describe --members --verbose: %q", out)
	}
}
