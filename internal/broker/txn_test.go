package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProducer is a transactional franz-go producer for tb.
func (tb *testBroker) txnProducer(id string, opts ...kgo.Opt) *kgo.Client {
	tb.t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(tb.b.Addr()), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(10 * time.Second)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		tb.t.Fatalf("transactional client: %v", err)
	}
	tb.t.Cleanup(cl.Close)
	return cl
}

// produceTxn writes values to topic-0 in one transaction and ends it.
func produceTxn(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, commit bool, values ...string) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// consumeAll reads topic from the start with the isolation level until it
// has want records, failing on more; it returns their values.
func (tb *testBroker) consumeAll(ctx context.Context, topic string, committed bool, want int) []string {
	tb.t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		tb.t.Fatalf("consumer: %v", err)
	}
	defer cl.Close()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			tb.t.Fatalf("consumed %v of %d records: %v", got, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != want {
		tb.t.Fatalf("consumed %v, want %d records", got, want)
	}
	return got
}

func TestTxnCommitAbortIsolation(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "t", 1, nil)
	p := tb.txnProducer("tx1")
	produceTxn(ctx, t, p, "t", false, "a1", "a2", "a3")
	produceTxn(ctx, t, p, "t", true, "c1", "c2")

	// The committed records follow the aborted ones: a read_committed
	// consumer that reaches them would have seen leaked aborted records.
	if got := tb.consumeAll(ctx, "t", true, 2); got[0] != "c1" || got[1] != "c2" {
		t.Fatalf("read_committed got %v, want [c1 c2]", got)
	}
	if got := tb.consumeAll(ctx, "t", false, 5); got[0] != "a1" || got[4] != "c2" {
		t.Fatalf("read_uncommitted got %v", got)
	}

	// An open transaction holds the last stable offset back.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lso, hw := tb.latest(ctx, "t", 1), tb.latest(ctx, "t", 0)
	// 3 aborted + marker + 2 committed + marker = 7; the open record is at 7.
	if lso != 7 || hw != 8 {
		t.Fatalf("last stable offset %d, high watermark %d; want 7 and 8", lso, hw)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if lso := tb.latest(ctx, "t", 1); lso != 9 {
		t.Fatalf("last stable offset after commit %d, want 9", lso)
	}

	// State survives a restart: aborted records stay hidden, and the
	// transactional id continues.
	tb.restart()
	ctx = testCtx(t)
	if got := tb.consumeAll(ctx, "t", true, 3); got[0] != "c1" || got[2] != "open" {
		t.Fatalf("read_committed after restart got %v, want [c1 c2 open]", got)
	}
	p2 := tb.txnProducer("tx1")
	produceTxn(ctx, t, p2, "t", true, "after")
	if got := tb.consumeAll(ctx, "t", true, 4); got[3] != "after" {
		t.Fatalf("read_committed got %v", got)
	}
}

// latest is ListOffsets latest of t-0 with the isolation level.
func (tb *testBroker) latest(ctx context.Context, topic string, isolation int8) int64 {
	tb.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := tb.request(ctx, req).(*kmsg.ListOffsetsResponse)
	sp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		tb.t.Fatalf("list offsets: %v", err)
	}
	return sp.Offset
}

func TestTxnZombieFencing(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "t", 1, nil)
	zombie := tb.txnProducer("same")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A second producer with the same id aborts the open transaction and
	// fences the first.
	fresh := tb.txnProducer("same")
	produceTxn(ctx, t, fresh, "t", true, "fresh")
	err := zombie.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("zombie2")}).FirstErr()
	if err == nil {
		err = zombie.EndTransaction(ctx, kgo.TryCommit)
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie got %v, want it fenced", err)
	}
	if got := tb.consumeAll(ctx, "t", true, 1); got[0] != "fresh" {
		t.Fatalf("read_committed got %v, want [fresh]", got)
	}
}

func TestTxnInvalidTimeout(t *testing.T) {
	tb := newTestBroker(t, "transaction.max.timeout.ms=1000")
	ctx := testCtx(t)
	id := "slow"
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.CoordinatorKeys, req.CoordinatorType = id, []string{id}, 1
	fc := tb.request(ctx, req).(*kmsg.FindCoordinatorResponse)
	if len(fc.Coordinators) != 1 || fc.Coordinators[0].ErrorCode != 0 || fc.Coordinators[0].NodeID != tb.b.nodeID {
		t.Fatalf("find coordinator: %+v", fc.Coordinators)
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID = &id
	ip.TransactionTimeoutMillis = 5000
	if resp := tb.request(ctx, ip).(*kmsg.InitProducerIDResponse); resp.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("init producer id: code %d, want INVALID_TRANSACTION_TIMEOUT", resp.ErrorCode)
	}
}

func TestTxnConsumeTransformProduce(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "in", 1, nil)
	tb.createTopic(ctx, "out", 1, nil)
	tb.produce(ctx, "in", 0, 5)
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(tb.b.Addr()), kgo.TransactionalID("ctp"),
		kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done := 0
	for done < 5 {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("processed %d of 5: %v", done, ctx.Err())
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			sess.Produce(ctx, &kgo.Record{Topic: "out", Value: r.Value}, nil)
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		if committed {
			done += n
		}
	}
	offs, err := tb.adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("in", 0); !ok || o.At != 5 {
		t.Fatalf("committed offset of in-0 = %+v (found %v), want 5", o, ok)
	}
	tb.consumeAll(ctx, "out", true, 5)

	// The offsets were committed through a transaction marker; they are
	// rebuilt from __consumer_offsets after a restart.
	tb.restart()
	ctx = testCtx(t)
	offs, err = tb.adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("in", 0); !ok || o.At != 5 {
		t.Fatalf("after restart committed offset of in-0 = %+v, want 5", o)
	}
}
