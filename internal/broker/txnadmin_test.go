package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/silkworm/silkworm/internal/record"
)

// txnBatch is a transactional batch of one record from producer pid at
// epoch, starting at sequence seq.
func txnBatch(pid int64, epoch int16, seq int32, value string) []byte {
	return record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli(), Transactional: true,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, []record.Record{{Value: []byte(value)}})
}

// rawTxnProduce sends one transactional batch at a Produce version and
// returns the partition's answer. From v13 the topic is named by id.
func rawTxnProduce(t *testing.T, c *rawConn, version int16, txnID string, topic string, id [16]byte, p int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.TransactionID = &txnID
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce v%d: malformed response %+v", version, resp)
	}
	if version >= 13 && resp.Topics[0].TopicID != id {
		t.Fatalf("produce v%d: response names topic id %x, want %x", version, resp.Topics[0].TopicID, id)
	}
	return resp.Topics[0].Partitions[0]
}

// describeTxn returns a transactional id's description (its coordinator
// is the only broker).
func (tb *testBroker) describeTxn(ctx context.Context, id string) kmsg.DescribeTransactionsResponseTransactionState {
	tb.t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := tb.request(ctx, req).(*kmsg.DescribeTransactionsResponse)
	if len(resp.TransactionStates) != 1 {
		tb.t.Fatalf("describe transactions: %+v", resp)
	}
	return resp.TransactionStates[0]
}

func TestTxnAdminDescribeAndList(t *testing.T) {
	ctx := testCtx(t)
	tb := newTestBroker(t)
	tb.createTopic(ctx, "ta", 2, nil)
	prod := tb.txnProducer("tx-a")
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "ta", Partition: 1, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := prod.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	producers, err := tb.adm.DescribeProducers(ctx, map[string]map[int32]struct{}{"ta": {1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	dp, ok := producers["ta"].Partitions[1]
	if !ok || dp.Err != nil || len(dp.ActiveProducers) != 1 {
		t.Fatalf("describe producers while ongoing: %+v", dp)
	}
	ap := dp.ActiveProducers.Sorted()[0]
	if ap.ProducerID != pid || ap.ProducerEpoch != epoch || ap.LastSequence != 0 || ap.CurrentTxnStartOffset != 0 || ap.CoordinatorEpoch != -1 {
		t.Fatalf("active producer while ongoing: %+v (pid %d epoch %d)", ap, pid, epoch)
	}

	d := tb.describeTxn(ctx, "tx-a")
	if d.ErrorCode != 0 || d.State != "Ongoing" || d.ProducerID != pid || d.StartTimestamp <= 0 ||
		len(d.Topics) != 1 || d.Topics[0].Topic != "ta" || len(d.Topics[0].Partitions) != 1 || d.Topics[0].Partitions[0] != 1 {
		t.Fatalf("describe ongoing: %+v", d)
	}
	if d := tb.describeTxn(ctx, "nobody"); d.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("describe unknown id: %+v", d)
	}

	listed, err := tb.adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := listed["tx-a"]; !ok || l.ProducerID != pid || l.State != "Ongoing" || len(listed) != 1 {
		t.Fatalf("list ongoing: %+v", listed)
	}
	list := func(version int16, edit func(*kmsg.ListTransactionsRequest)) *kmsg.ListTransactionsResponse {
		t.Helper()
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version = version
		edit(req)
		c := dialRaw(t, tb.b.Addr())
		return c.roundTrip(req).(*kmsg.ListTransactionsResponse)
	}
	if r := list(0, func(r *kmsg.ListTransactionsRequest) { r.StateFilters = []string{"Bogus"} }); len(r.TransactionStates) != 0 ||
		len(r.UnknownStateFilters) != 1 || r.UnknownStateFilters[0] != "Bogus" {
		t.Fatalf("unknown state filter: %+v", r)
	}
	if r := list(0, func(r *kmsg.ListTransactionsRequest) { r.ProducerIDFilters = []int64{pid + 1000} }); len(r.TransactionStates) != 0 {
		t.Fatalf("producer id filter: %+v", r)
	}
	if r := list(1, func(r *kmsg.ListTransactionsRequest) { r.DurationFilterMillis = time.Hour.Milliseconds() }); len(r.TransactionStates) != 0 {
		t.Fatalf("duration filter of an hour: %+v", r)
	}
	if r := list(1, func(r *kmsg.ListTransactionsRequest) { r.DurationFilterMillis = 0 }); len(r.TransactionStates) != 1 {
		// The transaction began at least a millisecond ago: poll no clock,
		// just accept both once time has moved on.
		waitFor(t, "the transaction to be older than 0 ms", func() bool {
			return len(list(1, func(r *kmsg.ListTransactionsRequest) { r.DurationFilterMillis = 0 }).TransactionStates) == 1
		})
	}
	if r := list(2, func(r *kmsg.ListTransactionsRequest) { r.TransactionalIDPattern = kmsg.StringPtr("tx-.*") }); len(r.TransactionStates) != 1 {
		t.Fatalf("pattern tx-.*: %+v", r)
	}
	if r := list(2, func(r *kmsg.ListTransactionsRequest) { r.TransactionalIDPattern = kmsg.StringPtr("tx-") }); len(r.TransactionStates) != 0 {
		t.Fatalf("pattern tx- must match the whole id: %+v", r)
	}
	if r := list(2, func(r *kmsg.ListTransactionsRequest) { r.TransactionalIDPattern = kmsg.StringPtr("(") }); r.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("invalid pattern: %+v", r)
	}

	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// transaction.version is 2 (KIP-890 part 2): franz-go's EndTxn v5
	// bumped the epoch, and the marker carries it.
	if _, e, err := prod.ProducerID(ctx); err != nil || e != epoch+1 {
		t.Fatalf("epoch after commit: %d %v, want %d", e, err, epoch+1)
	}
	producers, err = tb.adm.DescribeProducers(ctx, map[string]map[int32]struct{}{"ta": {1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	dp = producers["ta"].Partitions[1]
	if ap = dp.ActiveProducers.Sorted()[0]; ap.CurrentTxnStartOffset != -1 || ap.CoordinatorEpoch < 0 || ap.ProducerEpoch != epoch+1 {
		t.Fatalf("active producer after commit: %+v", ap)
	}
	if d := tb.describeTxn(ctx, "tx-a"); d.State != "CompleteCommit" || len(d.Topics) != 0 {
		t.Fatalf("describe after commit: %+v", d)
	}
	// A marker from an older coordinator epoch is fenced.
	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.CoordinatorEpoch = pid, epoch, ap.CoordinatorEpoch-1
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "ta", []int32{1}
	mk.Topics = append(mk.Topics, mt)
	wm.Markers = append(wm.Markers, mk)
	wr := tb.request(ctx, wm).(*kmsg.WriteTxnMarkersResponse)
	if code := wr.Markers[0].Topics[0].Partitions[0].ErrorCode; code != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("marker from an older coordinator epoch: code %d", code)
	}

	// Errors per partition: unknown, and DescribeProducers v0 from kmsg.
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "ta", []int32{7}
	req.Topics = append(req.Topics, rt)
	resp := tb.request(ctx, req).(*kmsg.DescribeProducersResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("describe producers of a missing partition: code %d", code)
	}
}

// KIP-890 part 1: a transactional write to a partition that is not in the
// producer's ongoing transaction (here: after the transaction ended) is
// refused, and nothing is appended.
func TestTxnVerificationRefusesLateWrite(t *testing.T) {
	ctx := testCtx(t)
	tb := newTestBroker(t)
	tb.createTopic(ctx, "tv", 2, nil)
	prod := tb.txnProducer("tx-v")
	produceTxn(ctx, t, prod, "tv", true, "committed")
	pid, epoch, err := prod.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, tb.b.Addr())
	for _, tc := range []struct {
		version int16
		want    int16
	}{{10, kerr.InvalidTxnState.Code}, {11, kerr.TransactionAbortable.Code}} {
		sp := rawTxnProduce(t, c, tc.version, "tx-v", "tv", [16]byte{}, 1, txnBatch(pid, epoch, 1, "late"))
		if sp.ErrorCode != tc.want {
			t.Fatalf("late write v%d: code %d, want %d", tc.version, sp.ErrorCode, tc.want)
		}
	}
	if _, p := tb.b.partition("tv", 1); p.Log.LogEndOffset() != 0 {
		t.Fatalf("refused writes were appended: log end %d", p.Log.LogEndOffset())
	}
	// A fenced producer (older epoch) is INVALID_PRODUCER_EPOCH.
	prod2 := tb.txnProducer("tx-v")
	produceTxn(ctx, t, prod2, "tv", true, "newer")
	if sp := rawTxnProduce(t, c, 11, "tx-v", "tv", [16]byte{}, 1, txnBatch(pid, epoch, 1, "zombie")); sp.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("zombie write: code %d", sp.ErrorCode)
	}
}

// KIP-890 part 2 on the wire: Produce v12 adds the partition itself,
// EndTxn v5 bumps the epoch (markers carry it), the old epoch is fenced,
// and Produce v13 names the topic by id.
func TestTxnV2EpochBumpAndTopicIDs(t *testing.T) {
	ctx := testCtx(t)
	tb := newTestBroker(t)
	tb.createTopic(ctx, "t2", 2, nil)
	c := dialRaw(t, tb.b.Addr())
	// FindCoordinator creates __transaction_state; the broker is its leader.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys, fc.CoordinatorType = "tx-2", []string{"tx-2"}, 1
	tb.request(ctx, fc)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 5
	init.TransactionalID = kmsg.StringPtr("tx-2")
	init.TransactionTimeoutMillis = 60000
	var ir *kmsg.InitProducerIDResponse
	waitFor(t, "InitProducerId v5", func() bool {
		ir = c.roundTrip(init).(*kmsg.InitProducerIDResponse)
		return ir.ErrorCode == 0
	})
	pid, epoch := ir.ProducerID, ir.ProducerEpoch

	if sp := rawTxnProduce(t, c, 12, "tx-2", "t2", [16]byte{}, 0, txnBatch(pid, epoch, 0, "a")); sp.ErrorCode != 0 {
		t.Fatalf("produce v12 without AddPartitionsToTxn: code %d", sp.ErrorCode)
	}
	if d := tb.describeTxn(ctx, "tx-2"); d.State != "Ongoing" || len(d.Topics) != 1 || d.Topics[0].Partitions[0] != 0 {
		t.Fatalf("after implicit add: %+v", d)
	}
	// TxnOffsetCommit: v3 without AddOffsetsToTxn is refused (the group's
	// partition is not in the transaction); v5 adds it itself.
	gc := kmsg.NewPtrFindCoordinatorRequest()
	gc.CoordinatorKey, gc.CoordinatorKeys = "g2", []string{"g2"}
	tb.request(ctx, gc)
	commit := func(version int16) int16 {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version = version
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "tx-2", "g2", pid, epoch
		req.Generation = -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "t2"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		var code int16
		waitFor(t, "a group coordinator", func() bool {
			code = c.roundTrip(req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
			return code != kerr.CoordinatorLoadInProgress.Code && code != kerr.CoordinatorNotAvailable.Code
		})
		return code
	}
	if code := commit(3); code != kerr.InvalidTxnState.Code {
		t.Fatalf("TxnOffsetCommit v3 without AddOffsetsToTxn: code %d, want INVALID_TXN_STATE", code)
	}
	if code := commit(5); code != 0 {
		t.Fatalf("TxnOffsetCommit v5: code %d", code)
	}
	if d := tb.describeTxn(ctx, "tx-2"); len(d.Topics) != 2 || d.Topics[0].Topic != offsetsTopic {
		t.Fatalf("after TxnOffsetCommit v5 the group's partition is in the transaction: %+v", d)
	}
	// AddOffsetsToTxn v4 (KIP-1050, as Kafka 4.x's producer sends it) for
	// the group already in the transaction: accepted again.
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version = 4
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "tx-2", pid, epoch, "g2"
	if code := c.roundTrip(ao).(*kmsg.AddOffsetsToTxnResponse).ErrorCode; code != 0 {
		t.Fatalf("AddOffsetsToTxn v4: code %d", code)
	}

	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 5
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "tx-2", pid, epoch, true
	er := c.roundTrip(end).(*kmsg.EndTxnResponse)
	if er.ErrorCode != 0 || er.ProducerID != pid || er.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn v5: %+v", er)
	}
	_, p := tb.b.partition("t2", 0)
	if _, open := p.Log.OngoingTxnStart(pid); open {
		t.Fatal("the commit marker did not close the transaction")
	}
	for _, pi := range p.Log.Producers() {
		if pi.ProducerID == pid && pi.ProducerEpoch != epoch+1 {
			t.Fatalf("the marker does not carry the bumped epoch: %+v", pi)
		}
	}
	// A late write of the ended transaction, to a partition it used and
	// to one it did not: fenced either way.
	for _, part := range []int32{0, 1} {
		if sp := rawTxnProduce(t, c, 12, "tx-2", "t2", [16]byte{}, part, txnBatch(pid, epoch, 1, "late")); sp.ErrorCode != kerr.InvalidProducerEpoch.Code {
			t.Fatalf("late write to partition %d: code %d", part, sp.ErrorCode)
		}
	}
	// v13: by topic id, with the bumped epoch from sequence 0.
	id := tb.b.meta.Image().Topics["t2"].ID
	if sp := rawTxnProduce(t, c, 13, "tx-2", "", id, 1, txnBatch(pid, epoch+1, 0, "b")); sp.ErrorCode != 0 {
		t.Fatalf("produce v13: code %d", sp.ErrorCode)
	}
	if sp := rawTxnProduce(t, c, 13, "tx-2", "", [16]byte{1, 2, 3}, 1, txnBatch(pid, epoch+1, 1, "c")); sp.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("produce v13 to an unknown topic id: code %d", sp.ErrorCode)
	}
	end.ProducerEpoch, end.Commit = epoch+1, false
	if er := c.roundTrip(end).(*kmsg.EndTxnResponse); er.ErrorCode != 0 || er.ProducerEpoch != epoch+2 {
		t.Fatalf("abort v5: %+v", er)
	}
	got := tb.consumeAll(ctx, "t2", true, 1)
	if got[0] != "a" {
		t.Fatalf("read_committed: %v", got)
	}
	offsets, err := tb.adm.FetchOffsets(ctx, "g2")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("t2", 0); !ok || o.At != 1 {
		t.Fatalf("the committed transaction's offset: %+v", offsets)
	}
}

// AddPartitionsToTxn v4+ (sent by brokers) answers per transaction.
func TestTxnAddPartitionsV4Batch(t *testing.T) {
	ctx := testCtx(t)
	tb := newTestBroker(t)
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "nobody", 1, 0, true
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	tx.Topics = append(tx.Topics, rt)
	req.Transactions = append(req.Transactions, tx)
	resp := tb.request(ctx, req).(*kmsg.AddPartitionsToTxnResponse)
	if resp.ErrorCode != 0 || len(resp.Transactions) != 1 {
		t.Fatalf("without an authorizer: %+v", resp)
	}
	if code := resp.Transactions[0].Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidProducerIDMapping.Code &&
		!errors.Is(kerr.ErrorForCode(code), kerr.NotCoordinator) {
		t.Fatalf("verify an unknown id: code %d", code)
	}
}

// The administrative transaction APIs check Kafka's ACLs: DESCRIBE on the
// transactional id (DescribeTransactions; ListTransactions leaves out the
// others), DESCRIBE on a topic to see it among a transaction's
// partitions, READ on the topic for DescribeProducers.
func TestTxnAdminAuthorization(t *testing.T) {
	tb := newSASLBroker(t,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS;User:admin")
	ctx := testCtx(t)
	tb.createTopic(ctx, "sec", 1, nil)
	prod := tb.txnProducer("tx-s")
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "sec", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	alice := kadm.NewClient(saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))

	dps, err := alice.DescribeProducers(ctx, map[string]map[int32]struct{}{"sec": {0: {}}})
	if err == nil {
		err = dps["sec"].Partitions[0].Err
	}
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("describe producers without READ: %v", err)
	}
	dts, err := alice.DescribeTransactions(ctx, "tx-s")
	if err == nil {
		err = dts["tx-s"].Err
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("describe transaction without DESCRIBE: %v", err)
	}
	if ls, err := alice.ListTransactions(ctx, nil, nil); err != nil || len(ls) != 0 {
		t.Fatalf("list transactions without DESCRIBE: %v %v", ls, err)
	}

	if _, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").TransactionalIDs("tx-s").Operations(kadm.OpDescribe)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice may describe tx-s", func() bool {
		dts, err := alice.DescribeTransactions(ctx, "tx-s")
		return err == nil && dts["tx-s"].Err == nil
	})
	dts, _ = alice.DescribeTransactions(ctx, "tx-s")
	if d := dts["tx-s"]; d.State != "Ongoing" || len(d.Topics) != 0 {
		t.Fatalf("alice may not describe sec, so it is left out: %+v", d)
	}
	if ls, err := alice.ListTransactions(ctx, nil, nil); err != nil || len(ls) != 1 {
		t.Fatalf("list transactions with DESCRIBE: %v %v", ls, err)
	}
	if _, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("sec").Operations(kadm.OpRead)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice may describe the producers of sec", func() bool {
		dps, err := alice.DescribeProducers(ctx, map[string]map[int32]struct{}{"sec": {0: {}}})
		return err == nil && dps["sec"].Partitions[0].Err == nil && len(dps["sec"].Partitions[0].ActiveProducers) == 1
	})
	dts, _ = alice.DescribeTransactions(ctx, "tx-s")
	if d := dts["tx-s"]; len(d.Topics["sec"]) != 1 {
		t.Fatalf("with READ (so DESCRIBE) on sec alice sees it: %+v", d)
	}
}
