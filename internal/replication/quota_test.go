package replication

import (
	"sync"
	"testing"

	"github.com/silkworm/silkworm/internal/partition"
)

// fakeQuota throttles the replicas of topic "slow".
type fakeQuota struct {
	mu       sync.Mutex
	exceeded bool
	recorded int64
}

func (q *fakeQuota) Throttled(topic string, _ int32) bool { return topic == "slow" }
func (q *fakeQuota) Exceeded() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.exceeded
}
func (q *fakeQuota) Record(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.recorded += n
}

func TestThrottleFilter(t *testing.T) {
	m := NewManager(DefaultConfig(3))
	defer m.Close()
	slow := &fetchState{p: &partition.Partition{Topic: "slow", Index: 0}}
	fast := &fetchState{p: &partition.Partition{Topic: "fast", Index: 0}}
	parts := []*fetchState{slow, fast}

	kept, throttled := m.throttleFilter(parts)
	if len(kept) != 2 || throttled != nil {
		t.Fatalf("no quota: kept %d, throttled %v", len(kept), throttled)
	}
	q := &fakeQuota{}
	m.SetQuota(q)
	kept, throttled = m.throttleFilter(parts)
	if len(kept) != 2 || !throttled[slow] || throttled[fast] {
		t.Fatalf("under quota: kept %d, throttled %v", len(kept), throttled)
	}
	q.exceeded = true
	kept, _ = m.throttleFilter(parts)
	if len(kept) != 1 || kept[0] != fast {
		t.Fatalf("over quota: kept %v, want only the unthrottled replica", kept)
	}
	m.SetQuota(nil)
	if kept, _ := m.throttleFilter(parts); len(kept) != 2 {
		t.Fatalf("quota removed: kept %d", len(kept))
	}
}
