package partition

import (
	"errors"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

func openLog(t *testing.T) *storage.Log {
	t.Helper()
	m, err := storage.OpenManager(storage.DefaultManagerConfig(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	l, err := m.GetOrCreate("t", 0, [16]byte{1}, storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func batch(n int) []byte {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte("v")}
	}
	return record.BuildBatch(record.BuildOptions{}, recs)
}

func TestSingleReplicaHighWatermarkFollowsLogEnd(t *testing.T) {
	p := New("t", 0, [16]byte{1}, openLog(t), 1, 0)
	w := make(chan struct{}, 1)
	p.Watch(w)
	defer p.Unwatch(w)
	res, err := p.AppendAsLeader(batch(3), 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.BaseOffset != 0 || p.HighWatermark() != 3 {
		t.Fatalf("base %d hw %d", res.BaseOffset, p.HighWatermark())
	}
	select {
	case <-w:
	default:
		t.Fatal("waiter not woken by the high watermark moving")
	}
}

func TestHighWatermarkIsSmallestISRLogEnd(t *testing.T) {
	now := time.Now()
	p := NewReplica("t", 0, [16]byte{1}, openLog(t), 1)
	p.MakeLeader(1, 5, 0, []int32{1, 2, 3}, []int32{1, 2, 3}, now)
	if _, err := p.AppendAsLeader(batch(10), 2); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("hw %d before followers fetched", hw)
	}
	if _, err := p.UpdateFollower(2, 10, now); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("hw %d with follower 3 unknown", hw)
	}
	if _, err := p.UpdateFollower(3, 4, now); err != nil {
		t.Fatal(err)
	}
	// follower 3 fetched at 4, but offset 4 is inside the first batch; the
	// high watermark only moves to batch boundaries it can locate.
	if hw := p.HighWatermark(); hw != 0 && hw != 4 {
		t.Fatalf("hw %d", hw)
	}
	if _, err := p.UpdateFollower(3, 10, now); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 10 {
		t.Fatalf("hw %d after all ISR caught up", hw)
	}
	// Shrinking the ISR to the leader lets the high watermark follow it.
	p.SetISR([]int32{1}, 1)
	if _, err := p.AppendAsLeader(batch(5), 1); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 15 {
		t.Fatalf("hw %d with ISR {1}", hw)
	}
	if _, err := p.AppendAsLeader(batch(1), 2); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all with ISR 1 < min 2: %v", err)
	}
	if _, err := p.UpdateFollower(9, 0, now); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("fetch from non-replica: %v", err)
	}
}

func TestLaggingFollowersAndExpansion(t *testing.T) {
	t0 := time.Now()
	p := NewReplica("t", 0, [16]byte{1}, openLog(t), 1)
	p.MakeLeader(1, 1, 0, []int32{1, 2}, []int32{1, 2}, t0)
	if _, err := p.AppendAsLeader(batch(4), 0); err != nil {
		t.Fatal(err)
	}
	if lag := p.LaggingFollowers(t0.Add(time.Second), 30*time.Second); len(lag) != 0 {
		t.Fatalf("lagging too early: %v", lag)
	}
	if lag := p.LaggingFollowers(t0.Add(31*time.Second), 30*time.Second); len(lag) != 1 || lag[0] != 2 {
		t.Fatalf("lagging = %v, want [2]", lag)
	}
	p.SetISR([]int32{1}, 1)
	expand, err := p.UpdateFollower(2, 4, t0.Add(32*time.Second))
	if err != nil || !expand {
		t.Fatalf("caught-up follower outside ISR: expand=%v err=%v", expand, err)
	}
}

func TestFollowerRole(t *testing.T) {
	p := NewReplica("t", 0, [16]byte{1}, openLog(t), 2)
	p.MakeFollower(2, 1, 3, 0, []int32{1, 2}, []int32{1, 2})
	if _, err := p.AppendAsLeader(batch(1), 0); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append on follower: %v", err)
	}
	b := batch(2)
	record.SetBaseOffset(b, 0)
	if _, err := p.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	p.UpdateFollowerHighWatermark(7)
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("follower hw %d, want min(leader 7, LEO 2)", hw)
	}
}

// TestAppendWakesFollowerWaitersOnly: an append that does not move the
// high watermark (a follower lacks it) wakes the followers' parked fetches
// (WatchLogEnd), not the consumers' (Watch), which read only up to the
// high watermark; when the follower's fetch moves it, both wake.
func TestAppendWakesFollowerWaitersOnly(t *testing.T) {
	p := New("t", 0, [16]byte{1}, openLog(t), 1, 0)
	p.MakeLeader(1, 1, 1, []int32{1, 2}, []int32{1, 2}, time.Now())
	consumer, follower := make(chan struct{}, 1), make(chan struct{}, 1)
	p.Watch(consumer)
	p.WatchLogEnd(follower)
	defer p.Unwatch(consumer)
	defer p.Unwatch(follower)
	if hw, end := p.Waiting(); hw != 1 || end != 1 {
		t.Fatalf("Waiting() = %d, %d; want 1, 1", hw, end)
	}
	if _, err := p.AppendAsLeader(batch(2), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-follower:
	default:
		t.Fatal("an append did not wake the follower's parked fetch")
	}
	select {
	case <-consumer:
		t.Fatal("an append that left the high watermark at 0 woke a consumer's parked fetch")
	default:
	}
	if _, err := p.UpdateFollower(2, 2, time.Now()); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 2 {
		t.Fatalf("high watermark %d after the follower fetched at 2, want 2", p.HighWatermark())
	}
	for name, w := range map[string]chan struct{}{"consumer": consumer, "follower": follower} {
		select {
		case <-w:
		default:
			t.Errorf("the high watermark moved without waking the %s's parked fetch", name)
		}
	}
	p.Unwatch(consumer)
	p.Unwatch(follower)
	if hw, end := p.Waiting(); hw != 0 || end != 0 {
		t.Fatalf("Waiting() after Unwatch = %d, %d; want 0, 0", hw, end)
	}
}

// TestFollowerHighWatermarkHints: a follower following its leader's high
// watermark takes the position from a hint at that offset, and searches
// the log for an offset no hint names; either way the position is the
// start of the batch at the high watermark.
func TestFollowerHighWatermarkHints(t *testing.T) {
	l := openLog(t)
	p := NewReplica("t", 0, [16]byte{1}, l, 2)
	p.MakeFollower(2, 1, 1, 1, []int32{1, 2}, []int32{1, 2})
	var ends []storage.Position
	for range 3 {
		b := batch(2)
		record.SetBaseOffset(b, l.LogEndOffset())
		if _, err := p.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, l.EndPosition())
	}
	p.UpdateFollowerHighWatermark(2, ends[0], ends[2])
	if got := p.HighWatermarkPosition(); got != ends[0] {
		t.Fatalf("high watermark at a hint: %+v, want %+v", got, ends[0])
	}
	p.UpdateFollowerHighWatermark(4) // no hint: search
	if got := p.HighWatermarkPosition(); got != ends[1] {
		t.Fatalf("high watermark by search: %+v, want %+v", got, ends[1])
	}
	p.UpdateFollowerHighWatermark(100, ends[0]) // capped at the log end
	if got := p.HighWatermarkPosition(); got != ends[2] {
		t.Fatalf("high watermark past the log end: %+v, want the log end %+v", got, ends[2])
	}
}

// condFunc is a WakeCond from a function.
type condFunc func() bool

func (f condFunc) Wakes() bool { return f() }

// TestHighWatermarkWakesOnlyWaitersItConcerns: a high watermark move
// wakes a WatchHighWatermark waiter only once it reaches the waiter's
// offset and a WatchIf waiter only when its condition holds; losing the
// leadership wakes both regardless, so that they learn it.
func TestHighWatermarkWakesOnlyWaitersItConcerns(t *testing.T) {
	p := New("t", 0, [16]byte{1}, openLog(t), 1, 0)
	ack, parked := make(chan struct{}, 1), make(chan struct{}, 1)
	p.WatchHighWatermark(ack, 5)
	defer p.Unwatch(ack)
	var want bool
	asked := 0
	p.WatchIf(parked, condFunc(func() bool { asked++; return want }))
	defer p.Unwatch(parked)
	woken := func(w chan struct{}) bool {
		select {
		case <-w:
			return true
		default:
			return false
		}
	}
	if _, err := p.AppendAsLeader(batch(3), 1); err != nil { // high watermark 3
		t.Fatal(err)
	}
	if woken(ack) {
		t.Error("a high watermark of 3 woke a wait for 5")
	}
	if w := woken(parked); w || asked != 1 {
		t.Errorf("condition false: woken %v, asked %d times; want not woken, asked once", w, asked)
	}
	if at := p.HighWatermarkAt(); at != p.HighWatermarkPosition() || at.Offset != 3 {
		t.Errorf("HighWatermarkAt() = %+v, HighWatermarkPosition() = %+v", at, p.HighWatermarkPosition())
	}
	want = true
	if _, err := p.AppendAsLeader(batch(2), 1); err != nil { // high watermark 5
		t.Fatal(err)
	}
	if !woken(ack) {
		t.Error("the high watermark reached 5 without waking the wait for 5")
	}
	if !woken(parked) {
		t.Error("condition true: the waiter was not woken")
	}
	want = false
	p.MakeFollower(1, 2, 1, 1, []int32{1, 2}, []int32{1, 2})
	if !woken(ack) || !woken(parked) {
		t.Error("losing the leadership did not wake every waiter")
	}
}
