package transactions

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/record"
)

// rows runs the tool and returns its output split into rows of trimmed
// cells, the header first.
func rows(t *testing.T, ctx context.Context, addr string, args ...string) [][]string {
	t.Helper()
	var out bytes.Buffer
	if err := Run(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &out); err != nil {
		t.Fatalf("transactions %q: %v", args, err)
	}
	var rs [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if !strings.HasSuffix(line, "\t") {
			t.Fatalf("transactions %q: row %q does not end with a tab, as Kafka's tables do", args, line)
		}
		var cells []string
		for _, c := range strings.Split(strings.TrimSuffix(line, "\t"), "\t") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rs = append(rs, cells)
	}
	return rs
}

// TestTransactionsEndToEnd drives every command against one broker with
// transaction verification off, so that a transactional write its
// coordinator never heard of can leave a hanging transaction behind.
func TestTransactionsEndToEnd(t *testing.T) {
	addr := brokertest.Start(t, "transaction.partition.verification.enable=false")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"live", "hang"} {
		if r, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, r.Err)
		}
	}

	// A live transaction.
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx-live"), kgo.TransactionTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "live", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := prod.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	got := rows(t, ctx, addr, "list")
	if len(got) != 2 || strings.Join(got[0], ",") != "TransactionalId,Coordinator,ProducerId,TransactionState" ||
		got[1][0] != "tx-live" || got[1][2] != itoa(pid) || got[1][3] != "Ongoing" {
		t.Fatalf("list: %q", got)
	}
	if got := rows(t, ctx, addr, "list", "--duration-filter", "3600000"); len(got) != 1 {
		t.Fatalf("list --duration-filter of an hour: %q", got)
	}
	got = rows(t, ctx, addr, "describe", "--transactional-id", "tx-live")
	if len(got) != 2 || got[1][1] != "tx-live" || got[1][3] != itoa(epoch) || got[1][4] != "Ongoing" ||
		got[1][5] != "60000" || got[1][6] == "None" || got[1][8] != "live-0" {
		t.Fatalf("describe: %q", got)
	}
	got = rows(t, ctx, addr, "describe-producers", "--topic", "live", "--partition", "0")
	if len(got) != 2 || got[1][0] != itoa(pid) || got[1][2] != "-1" || got[1][3] != "0" || got[1][5] != "0" {
		t.Fatalf("describe-producers: %q", got)
	}

	// A transactional write no coordinator knows of, an hour old.
	const ghost = int64(4_000_000)
	batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().Add(-time.Hour).UnixMilli(),
		Transactional: true, ProducerID: ghost, ProducerEpoch: 3, BaseSequence: 0}, []record.Record{{Value: []byte("x")}})
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = kmsg.StringPtr("ghost"), -1, 10000
	topics, err := adm.ListTopics(ctx, "hang")
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = "hang", topics["hang"].ID // the client may pick v13
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Before v12 (transaction version 2) a produce does not add its
	// partition to the transaction, and verification is off.
	old, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V3_7_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	resp, err := req.RequestWith(ctx, old.Broker(int(meta.Brokers[0].NodeID)))
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("raw transactional produce: %v %+v", err, resp)
	}

	hanging := rows(t, ctx, addr, "find-hanging", "--topic", "hang", "--max-transaction-timeout", "1")
	if len(hanging) != 2 || strings.Join(hanging[0], ",") != "Topic,Partition,ProducerId,ProducerEpoch,CoordinatorEpoch,StartOffset,LastTimestamp,Duration(min)" ||
		hanging[1][0] != "hang" || hanging[1][2] != itoa(ghost) || hanging[1][3] != "3" || hanging[1][4] != "-1" ||
		hanging[1][5] != "0" || (hanging[1][7] != "59" && hanging[1][7] != "60") {
		t.Fatalf("find-hanging --topic: %q", hanging)
	}
	byBroker := rows(t, ctx, addr, "find-hanging", "--broker-id", itoa(meta.Brokers[0].NodeID), "--max-transaction-timeout", "1")
	if len(byBroker) != 2 || byBroker[1][2] != itoa(ghost) {
		t.Fatalf("find-hanging --broker-id: %q (the live transaction is recent, the ghost hangs)", byBroker)
	}
	if got := rows(t, ctx, addr, "find-hanging", "--topic", "hang", "--partition", "0"); len(got) != 2 {
		t.Fatalf("find-hanging with the default 15 minutes misses an hour-old transaction: %q", got)
	}
	if got := rows(t, ctx, addr, "find-hanging", "--topic", "hang", "--max-transaction-timeout", "120"); len(got) != 1 {
		t.Fatalf("find-hanging with 120 minutes finds an hour-old transaction: %q", got)
	}
	var out bytes.Buffer
	if err := Run(ctx, []string{"--bootstrap-server", addr, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "0"}, &out, &out); err != nil || out.Len() != 0 {
		t.Fatalf("abort: %v %q", err, out.String())
	}
	if got := rows(t, ctx, addr, "find-hanging", "--topic", "hang", "--max-transaction-timeout", "1"); len(got) != 1 {
		t.Fatalf("find-hanging after abort: %q", got)
	}
	if got := rows(t, ctx, addr, "describe-producers", "--topic", "hang", "--partition", "0"); got[1][5] != "None" || got[1][2] != "0" {
		t.Fatalf("describe-producers after abort: %q", got)
	}
	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"describe", "--transactional-id", "nobody"}, "Failed to describe transaction state of transactional-id `nobody`"},
		{[]string{"find-hanging"}, "requires either --topic or --broker-id"},
		{[]string{"find-hanging", "--partition", "0", "--broker-id", "1"}, "--partition argument requires --topic"},
		{[]string{"abort", "--topic", "hang", "--partition", "0"}, "must be identified either with --start-offset"},
		{[]string{"abort", "--topic", "hang", "--partition", "0", "--start-offset", "7"}, "Could not find any open transactions starting at offset 7 on partition hang-0"},
		{[]string{"abort", "--topic", "hang", "--partition", "0", "--producer-id", "5"}, "Missing required argument --producer-epoch"},
		{[]string{"bogus"}, "invalid choice: 'bogus'"},
		{nil, "too few arguments"},
	} {
		var out bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", addr}, c.args...), &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("transactions %q: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
