package share

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// memPersister is a Persister in memory.
type memPersister struct {
	mu     sync.Mutex
	states map[Key]State
	writes int
	leads  bool
}

func (m *memPersister) Read(k Key) (State, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[k]
	return st, ok, nil
}

func (m *memPersister) Write(k Key, st State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states[k] = st
	m.writes++
	return nil
}

func (m *memPersister) Leads(Key, int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leads
}

func (m *memPersister) state(k Key) State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.states[k]
}

func TestManagerLoadsPersistsAndExpires(t *testing.T) {
	per := &memPersister{states: map[Key]State{}, leads: true}
	lim := Limits{LockDuration: 50 * time.Millisecond, DeliveryCountLimit: 5, MaxRecordLocks: 100}
	m := NewManager(per, func(string) Limits { return lim }, 10*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer m.Close()
	k := Key{Group: "g", Partition: 0}
	p, err := m.Partition(k, 3, func() int64 { return 7 })
	if err != nil {
		t.Fatal(err)
	}
	if st := per.state(k); st.StartOffset != 7 || st.LeaderEpoch != 3 {
		t.Fatalf("initial state %+v, want start 7 at leader epoch 3", st)
	}
	if again, _ := m.Partition(k, 3, nil); again != p {
		t.Fatalf("loaded twice")
	}
	p.Acquire("a", 0, 10, 10, lim, time.Now())
	if _, err := p.Acknowledge("a", []AckBatch{{7, 7, []AckType{AckAccept}}}, false, lim, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := m.Persist(k, p); err != nil {
		t.Fatal(err)
	}
	if st := per.state(k); st.StartOffset != 8 {
		t.Fatalf("after accept the stored start offset is %d, want 8", st.StartOffset)
	}
	// The sweeper releases 8-9 when their lock expires and persists it.
	wake := make(chan struct{}, 1)
	m.Watch(wake)
	defer m.Unwatch(wake)
	<-wake
	for deadline := time.Now().Add(10 * time.Second); ; {
		st := per.state(k)
		if len(st.Batches) == 1 && st.Batches[0] == (StateBatch{8, 9, Available, 1}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expired records not persisted: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A new leader epoch reloads from the persisted state.
	p2, err := m.Partition(k, 4, nil)
	if err != nil || p2 == p || p2.StartOffset() != 8 {
		t.Fatalf("reload at epoch 4: %v start %d", err, p2.StartOffset())
	}
	// Leadership gone: the sweeper drops it.
	per.mu.Lock()
	per.leads = false
	per.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); m.Loaded(k) != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("share-partition kept after leadership moved")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
