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
