package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeAndList(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	if _, code := c.DescribeTransaction("nobody"); code != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("unknown id: code %d", code)
	}
	a := initPID(t, c, "a", 4)
	b := initPID(t, c, "b", 4)
	d, code := c.DescribeTransaction("a")
	if code != 0 || d.State != Empty || d.ProducerID != a.ProducerID || d.StartMillis != -1 || d.TimeoutMillis != 1000 || len(d.Partitions) != 0 {
		t.Fatalf("empty a: %+v code %d", d, code)
	}
	if code := addPartitions(c, "b", b.ProducerID, b.ProducerEpoch, "t"); code != 0 {
		t.Fatal(code)
	}
	d, _ = c.DescribeTransaction("b")
	if d.State != Ongoing || d.StartMillis != now.UnixMilli() || len(d.Partitions["t"]) != 2 {
		t.Fatalf("ongoing b: %+v", d)
	}
	now = now.Add(5 * time.Second)

	names := func(ls []Listing) (out []string) {
		for _, l := range ls {
			out = append(out, l.TransactionalID+"="+l.State.String())
		}
		return out
	}
	check := func(f ListFilter, want ...string) {
		t.Helper()
		got := names(c.List(f))
		if len(got) != len(want) {
			t.Fatalf("filter %+v: got %v, want %v", f, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("filter %+v: got %v, want %v", f, got, want)
			}
		}
	}
	check(ListFilter{MinDurationMillis: -1}, "a=Empty", "b=Ongoing")
	check(ListFilter{MinDurationMillis: -1, States: []State{Ongoing}}, "b=Ongoing")
	check(ListFilter{MinDurationMillis: -1, ProducerIDs: []int64{a.ProducerID}}, "a=Empty")
	check(ListFilter{MinDurationMillis: 4000}, "a=Empty", "b=Ongoing") // a never started: start -1
	check(ListFilter{MinDurationMillis: 5000}, "a=Empty")
	check(ListFilter{MinDurationMillis: -1, Match: func(id string) bool { return id == "b" }}, "b=Ongoing")
	if s, ok := ParseState("PrepareCommit"); !ok || s != PrepareCommit {
		t.Fatal("ParseState")
	}
	if _, ok := ParseState("Bogus"); ok {
		t.Fatal("ParseState accepted an unknown name")
	}
}

func verifyReq(id string, pid int64, epoch int16, verify bool, topic string, p int32) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, verify
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = topic, []int32{p}
	tx.Topics = append(tx.Topics, rt)
	req.Transactions = append(req.Transactions, tx)
	return req
}

func TestVerifyOnly(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	r := initPID(t, c, "v", 4)
	code := func(req *kmsg.AddPartitionsToTxnRequest) int16 {
		return c.AddPartitionsToTxn(req).Transactions[0].Topics[0].Partitions[0].ErrorCode
	}
	if got := code(verifyReq("v", r.ProducerID, r.ProducerEpoch, true, "t", 0)); got != kerr.TransactionAbortable.Code {
		t.Fatalf("verify before add: %d", got)
	}
	if got := code(verifyReq("v", r.ProducerID, r.ProducerEpoch, false, "t", 0)); got != 0 {
		t.Fatalf("add v4: %d", got)
	}
	if got := code(verifyReq("v", r.ProducerID, r.ProducerEpoch, true, "t", 0)); got != 0 {
		t.Fatalf("verify after add: %d", got)
	}
	if got := code(verifyReq("v", r.ProducerID, r.ProducerEpoch, true, "t", 1)); got != kerr.TransactionAbortable.Code {
		t.Fatalf("verify other partition: %d", got)
	}
	if got := code(verifyReq("v", r.ProducerID, r.ProducerEpoch-1, true, "t", 0)); got != kerr.ProducerFenced.Code {
		t.Fatalf("verify old epoch: %d", got)
	}
	if got := code(verifyReq("v", r.ProducerID+1, r.ProducerEpoch, true, "t", 0)); got != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("verify other producer: %d", got)
	}
	if got := code(verifyReq("nobody", 1, 0, true, "t", 0)); got != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("verify unknown id: %d", got)
	}
	if code := endTxn(c, "v", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatal(code)
	}
	if got := c.VerifyPartition("v", r.ProducerID, r.ProducerEpoch, "t", 0, false); got != kerr.TransactionAbortable.Code {
		t.Fatalf("verify after commit: %d", got)
	}
}

func endTxnV5(c *Coordinator, id string, pid int64, epoch int16, commit bool) *kmsg.EndTxnResponse {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = 5
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return c.EndTxn(req)
}

func TestEndTxnV5BumpsEpoch(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	r := initPID(t, c, "e", 5)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	// Produce v12: the leader adds the partition.
	if got := c.VerifyPartition("e", pid, epoch, "t", 0, true); got != 0 {
		t.Fatalf("implicit add: %d", got)
	}
	resp := endTxnV5(c, "e", pid, epoch, true)
	if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != epoch+1 {
		t.Fatalf("commit v5: %+v", resp)
	}
	if m := h.markers[len(h.markers)-1]; !m.Commit || m.ProducerEpoch != epoch+1 {
		t.Fatalf("marker does not carry the bumped epoch: %+v", m)
	}
	// A retry with the old epoch gets the same answer.
	if again := endTxnV5(c, "e", pid, epoch, true); again.ErrorCode != 0 || again.ProducerEpoch != epoch+1 {
		t.Fatalf("retried commit: %+v", again)
	}
	// A late write of the ended transaction cannot join a new one.
	if got := c.VerifyPartition("e", pid, epoch, "t", 1, true); got != kerr.ProducerFenced.Code {
		t.Fatalf("late add with the old epoch: %d", got)
	}
	// An empty abort is accepted and bumps the epoch; an empty commit is not.
	if bad := endTxnV5(c, "e", pid, epoch+1, true); bad.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("empty commit: %+v", bad)
	}
	if ab := endTxnV5(c, "e", pid, epoch+1, false); ab.ErrorCode != 0 || ab.ProducerEpoch != epoch+2 {
		t.Fatalf("empty abort: %+v", ab)
	}
	if old := endTxnV5(c, "e", pid, epoch, false); old.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("stale epoch: %+v", old)
	}
}

// A retried EndTxn v5 is recognised by a coordinator that reloaded the
// state (a failover between the bump and the retry).
func TestEndTxnV5RetryAfterReload(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	r := initPID(t, c, "f", 5)
	if got := c.VerifyPartition("f", r.ProducerID, r.ProducerEpoch, "t", 0, true); got != 0 {
		t.Fatal(got)
	}
	if resp := endTxnV5(c, "f", r.ProducerID, r.ProducerEpoch, true); resp.ErrorCode != 0 {
		t.Fatalf("commit: %+v", resp)
	}
	c2 := newTestCoordinator(t, h, &now)
	if again := endTxnV5(c2, "f", r.ProducerID, r.ProducerEpoch, true); again.ErrorCode != 0 || again.ProducerEpoch != r.ProducerEpoch+1 {
		t.Fatalf("retry after reload: %+v", again)
	}
	if wrong := endTxnV5(c2, "f", r.ProducerID, r.ProducerEpoch, false); wrong.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("retry with the other outcome: %+v", wrong)
	}
}

// A transaction aborted by its timeout fences its producer, transaction
// version 2 or not: its EndTxn v5 is not taken for a retry.
func TestEndTxnV5AfterTimeoutIsFenced(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	r := initPID(t, c, "g", 5)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	if got := c.VerifyPartition("g", pid, epoch, "t", 0, true); got != 0 {
		t.Fatal(got)
	}
	if resp := endTxnV5(c, "g", pid, epoch, true); resp.ErrorCode != 0 {
		t.Fatalf("commit: %+v", resp)
	}
	if got := c.VerifyPartition("g", pid, epoch+1, "t", 0, true); got != 0 {
		t.Fatal(got)
	}
	now = now.Add(2 * time.Second)
	c.AbortTimedOut()
	if resp := endTxnV5(c, "g", pid, epoch+1, false); resp.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("abort after the timeout abort: %+v", resp)
	}
}
