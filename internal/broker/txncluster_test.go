package broker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/txn"
)

// TestClusterTxnRemoteMarkersAndCoordinatorFailover runs transactions on
// three nodes whose partitions are led by nodes other than the
// transaction coordinator (markers go out with WriteTxnMarkers, the
// leaders verify the transaction with AddPartitionsToTxn v4), refuses a
// late write of an ended transaction on a remote leader (KIP-890), then
// kills the coordinator (no controlled shutdown) in the middle of a
// transaction. The transaction then commits or aborts, and a
// read_committed consumer sees exactly the committed records.
func TestClusterTxnRemoteMarkersAndCoordinatorFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("three-node cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	tc := newTestCluster(t, 3, "transaction.state.log.num.partitions=3",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000")
	adm := kadm.NewClient(tc.client())
	res, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "txc")
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	waitFor(t, "full ISR", func() bool { return tc.fullISR("txc", 3) })

	const id = "tx-cluster"
	prod := tc.client(kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(30*time.Second), kgo.RecordRetries(100), kgo.RetryTimeout(60*time.Second))
	txnRecords := func(prefix string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for p := int32(0); p < 3; p++ {
			r := &kgo.Record{Topic: "txc", Partition: p, Value: []byte(fmt.Sprintf("%s-p%d", prefix, p))}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %s to partition %d: %v", prefix, p, err)
			}
		}
	}
	end := func(commit bool) error { return prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)) }

	txnRecords("c1")
	if err := end(true); err != nil {
		t.Fatalf("commit c1: %v", err)
	}
	coordinator := tc.leaderOf(transactionStateTopic, txn.PartitionFor(id, 3))
	remote := int32(-1)
	for p := int32(0); p < 3; p++ {
		if l := tc.leaderOf("txc", p); l != coordinator {
			remote = p
		}
	}
	if coordinator < 0 || remote < 0 {
		t.Fatalf("coordinator %d leads every partition of txc: no remote leader to test", coordinator)
	}
	txnRecords("a2")
	if err := end(false); err != nil {
		t.Fatalf("abort a2: %v", err)
	}

	// A late write of the ended transaction to a remote leader: it asks
	// the coordinator, which knows the transaction is over.
	pid, epoch, err := prod.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := tc.brokers[tc.leaderOf("txc", remote)-1]
	_, lp := leader.partition("txc", remote)
	before := lp.Log.LogEndOffset()
	c := dialRaw(t, leader.Addr())
	if sp := rawTxnProduce(t, c, 11, id, "txc", [16]byte{}, remote, txnBatch(pid, epoch, 100, "late")); sp.ErrorCode != kerr.TransactionAbortable.Code {
		t.Fatalf("late write on remote leader: code %d, want TRANSACTION_ABORTABLE", sp.ErrorCode)
	}
	if after := lp.Log.LogEndOffset(); after != before {
		t.Fatalf("refused write appended: log end %d -> %d", before, after)
	}

	// A follower describes its own copy of the producer state (the tool's
	// --broker-id): the producer, its transactions closed by markers.
	var follower *Broker
	for _, b := range tc.brokers {
		if b.nodeID != tc.leaderOf("txc", remote) {
			follower = b
		}
	}
	fc := dialRaw(t, follower.Addr())
	waitFor(t, "the follower's producer state", func() bool {
		req := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = "txc", []int32{remote}
		req.Topics = append(req.Topics, rt)
		resp := fc.roundTrip(req).(*kmsg.DescribeProducersResponse)
		sp := resp.Topics[0].Partitions[0]
		return sp.ErrorCode == 0 && len(sp.ActiveProducers) == 1 && sp.ActiveProducers[0].ProducerID == pid &&
			sp.ActiveProducers[0].CurrentTxnStartOffset == -1 && sp.ActiveProducers[0].CoordinatorEpoch >= 0
	})

	// The coordinator dies mid-transaction.
	txnRecords("c3")
	tc.crash(coordinator)
	t.Logf("crashed coordinator %d", coordinator)
	want := []string{"c1-p0", "c1-p1", "c1-p2"}
	if err := end(true); err == nil {
		t.Logf("committed after the coordinator failure")
		want = append(want, "c3-p0", "c3-p1", "c3-p2")
	} else {
		t.Logf("commit after coordinator failure: %v (the transaction aborts)", err)
		if err := end(false); err != nil {
			t.Logf("abort after coordinator failure: %v (the coordinator's timeout aborts it)", err)
		}
	}
	var live []string
	for _, b := range tc.brokers {
		if b != nil {
			live = append(live, b.Addr())
		}
	}
	cons := tc.client(kgo.SeedBrokers(live...), kgo.ConsumeTopics("txc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	var got []string
	for len(got) < len(want) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read_committed consumed %v, want %v: %v", got, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Every transaction has ended: nothing else may follow (bounded poll).
	pollCtx, pollCancel := context.WithTimeout(ctx, 500*time.Millisecond)
	cons.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	pollCancel()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed saw %v, want exactly %v", got, want)
	}
}
