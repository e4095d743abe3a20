package share

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

var testLimits = Limits{LockDuration: time.Second, DeliveryCountLimit: 3, MaxRecordLocks: 100}

func offsetsOf(rs []AcquiredRange) []int64 {
	var out []int64
	for _, r := range rs {
		for o := r.FirstOffset; o <= r.LastOffset; o++ {
			out = append(out, o)
		}
	}
	return out
}

func TestPartitionAcquireAcknowledgeAdvancesStartOffset(t *testing.T) {
	now := time.Unix(1000, 0)
	p := NewPartition(State{StartOffset: 10}, 1)
	got := p.Acquire("a", 0, 20, 4, testLimits, now)
	if want := []AcquiredRange{{10, 13, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
	got = p.Acquire("b", 0, 20, 100, testLimits, now)
	if want := []AcquiredRange{{14, 19, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second member acquired %v, want %v", got, want)
	}
	// b cannot acknowledge a's records, and nothing is applied when one
	// batch fails.
	_, err := p.Acknowledge("b", []AckBatch{{10, 10, []AckType{AckAccept}}, {14, 15, []AckType{AckAccept}}}, false, testLimits, now)
	if !errors.Is(err, ErrInvalidRecordState) {
		t.Fatalf("acknowledging another member's record: %v", err)
	}
	if _, err := p.Acknowledge("b", []AckBatch{{14, 15, []AckType{AckAccept}}}, false, testLimits, now); err != nil {
		t.Fatalf("b's own records: %v", err)
	}
	if p.StartOffset() != 10 {
		t.Fatalf("start offset %d moved past a's acquired records", p.StartOffset())
	}
	// Per-offset types: accept, reject, gap, accept.
	if _, err := p.Acknowledge("a", []AckBatch{{10, 13, []AckType{AckAccept, AckReject, AckGap, AckAccept}}}, false, testLimits, now); err != nil {
		t.Fatal(err)
	}
	if p.StartOffset() != 16 {
		t.Fatalf("start offset %d, want 16", p.StartOffset())
	}
	st, _ := p.Snapshot()
	want := State{StateEpoch: 0, LeaderEpoch: 1, StartOffset: 16, Batches: []StateBatch{{16, 19, Available, 1}}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("snapshot %+v, want %+v (acquired records persist as available)", st, want)
	}
}

func TestPartitionReleaseExpiryAndDeliveryLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	p := NewPartition(State{StartOffset: 0}, 0)
	p.Acquire("a", 0, 5, 10, testLimits, now)
	released, err := p.Acknowledge("a", []AckBatch{{0, 4, []AckType{AckRelease}}}, false, testLimits, now)
	if err != nil || !released {
		t.Fatalf("release: %v %v", released, err)
	}
	got := p.Acquire("b", 0, 5, 10, testLimits, now)
	if want := []AcquiredRange{{0, 4, 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after release %v, want %v", got, want)
	}
	// RENEW needs IsRenewAck, then extends the lock.
	if _, err := p.Acknowledge("b", []AckBatch{{0, 0, []AckType{AckRenew}}}, false, testLimits, now); !errors.Is(err, ErrInvalidAck) {
		t.Fatalf("renew without IsRenewAck: %v", err)
	}
	if _, err := p.Acknowledge("b", []AckBatch{{0, 0, []AckType{AckRenew}}}, true, testLimits, now.Add(900*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !p.Expire(testLimits, now.Add(time.Second)) {
		t.Fatalf("nothing expired")
	}
	got = p.Acquire("c", 0, 5, 10, testLimits, now.Add(time.Second))
	if want := []AcquiredRange{{1, 4, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after expiry %v, want %v (offset 0 renewed)", got, want)
	}
	// The third delivery was the last: expiry archives 1-4; offset 0,
	// delivered twice, becomes available.
	p.Expire(testLimits, now.Add(5*time.Second))
	if start, end, acquired := p.InFlight(); acquired != 0 || start != 0 || end != 5 {
		t.Fatalf("in flight %d-%d with %d acquired, want 0-5 and none", start, end, acquired)
	}
	got = p.Acquire("d", 0, 5, 10, testLimits, now.Add(10*time.Second))
	if want := []AcquiredRange{{0, 0, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("final delivery %v, want %v", got, want)
	}
	p.ReleaseMember("d", testLimits)
	if p.StartOffset() != 5 {
		t.Fatalf("start offset %d, want 5 with everything archived", p.StartOffset())
	}
}

func TestPartitionMaxRecordLocksAndUnacquire(t *testing.T) {
	now := time.Unix(1000, 0)
	lim := testLimits
	lim.MaxRecordLocks = 3
	p := NewPartition(State{StartOffset: 0}, 0)
	if got := offsetsOf(p.Acquire("a", 0, 10, 10, lim, now)); len(got) != 3 {
		t.Fatalf("acquired %v with 3 record locks", got)
	}
	if got := p.Acquire("b", 0, 10, 10, lim, now); got != nil {
		t.Fatalf("acquired %v beyond the record locks", got)
	}
	if p.HasAvailable(10, lim) {
		t.Fatalf("HasAvailable with a full window")
	}
	// Give back what could not be sent: the window shrinks again.
	p2 := NewPartition(State{StartOffset: 0}, 0)
	rs := p2.Acquire("a", 0, 10, 10, testLimits, now)
	kept := p2.Unacquire("a", 6, rs)
	if want := []AcquiredRange{{0, 5, 1}}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	if got := p2.Acquire("b", 0, 10, 10, testLimits, now); !reflect.DeepEqual(got, []AcquiredRange{{6, 9, 1}}) {
		t.Fatalf("after unacquire b got %v", got)
	}
	// Retention moved the log start past in-flight records.
	if got := p2.Acquire("c", 8, 12, 10, testLimits, now); !reflect.DeepEqual(got, []AcquiredRange{{10, 11, 1}}) || p2.StartOffset() != 8 {
		t.Fatalf("after log start 8: %v start %d", got, p2.StartOffset())
	}
}

func TestPartitionRestoresPersistedState(t *testing.T) {
	st := State{StateEpoch: 2, StartOffset: 5, Batches: []StateBatch{
		{5, 6, Acknowledged, 1}, {7, 8, Available, 2}, {9, 9, Archived, 3},
	}}
	p := NewPartition(st, 4)
	if p.StartOffset() != 7 {
		t.Fatalf("start offset %d, want 7 (5-6 acknowledged)", p.StartOffset())
	}
	got := p.Acquire("a", 0, 20, 100, testLimits, time.Unix(0, 0))
	if want := []AcquiredRange{{7, 8, 3}, {10, 19, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
	snap, _ := p.Snapshot()
	if snap.StateEpoch != 2 || snap.LeaderEpoch != 4 {
		t.Fatalf("epochs %d/%d, want 2/4", snap.StateEpoch, snap.LeaderEpoch)
	}
}
