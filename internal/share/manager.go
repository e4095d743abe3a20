package share

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Persister reads and writes share-partition state at the share
// coordinator (the leader of the key's __share_group_state partition),
// locally or with Read/WriteShareGroupState. The broker implements it.
type Persister interface {
	// Read returns key's state; ok is false when it has none.
	Read(key Key) (st State, ok bool, err error)
	// Write stores st as key's state and returns once it is committed.
	Write(key Key, st State) error
	// Leads reports whether this broker still leads key's topic-partition
	// at leaderEpoch; state of partitions it no longer leads is dropped.
	Leads(key Key, leaderEpoch int32) bool
}

// Manager keeps the share-partitions this broker leads: it loads each
// from the share coordinator on first use (or when the partition's
// leader epoch changed), persists changes, and releases records whose
// acquisition lock expired (a sweeper goroutine). The broker's
// ShareFetch and ShareAcknowledge handlers call it. Safe for concurrent
// use.
type Manager struct {
	persister Persister
	limits    func(group string) Limits
	log       *slog.Logger

	mu      sync.Mutex
	parts   map[Key]*managed
	waiters map[chan struct{}]struct{}

	stop chan struct{}
	done chan struct{}
}

// managed is one share-partition and its persistence bookkeeping.
type managed struct {
	leaderEpoch int32

	loadMu sync.Mutex                // held while loading
	p      atomic.Pointer[Partition] // set once loaded

	writeMu sync.Mutex // serialises writes; guards written
	written uint64     // the Partition version last persisted
}

// NewManager starts a manager whose sweeper checks acquisition locks
// every sweep interval.
func NewManager(persister Persister, limits func(group string) Limits, sweep time.Duration, log *slog.Logger) *Manager {
	m := &Manager{persister: persister, limits: limits, log: log,
		parts: map[Key]*managed{}, waiters: map[chan struct{}]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go m.sweepLoop(sweep)
	return m
}

// Close stops the sweeper.
func (m *Manager) Close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// Limits is the settings share-partitions of group apply now.
func (m *Manager) Limits(group string) Limits { return m.limits(group) }

// Partition returns key's share-partition led at leaderEpoch, loading
// it from the share coordinator when needed. A share-partition with no
// state starts at initial() (share.auto.offset.reset), and that start is
// persisted before any record is delivered; loading at a new leader
// epoch persists the state under that epoch, fencing the previous
// leader's writes.
func (m *Manager) Partition(key Key, leaderEpoch int32, initial func() int64) (*Partition, error) {
	m.mu.Lock()
	e := m.parts[key]
	if e == nil || e.leaderEpoch != leaderEpoch {
		e = &managed{leaderEpoch: leaderEpoch}
		m.parts[key] = e
	}
	m.mu.Unlock()
	e.loadMu.Lock()
	defer e.loadMu.Unlock()
	if p := e.p.Load(); p != nil {
		return p, nil
	}
	st, ok, err := m.persister.Read(key)
	if err != nil {
		m.forget(key, e)
		return nil, fmt.Errorf("read state of %s: %w", key, err)
	}
	if !ok {
		st = State{StartOffset: initial()}
	}
	p := NewPartition(st, leaderEpoch)
	snap, ver := p.Snapshot()
	if err := m.persister.Write(key, snap); err != nil {
		m.forget(key, e)
		return nil, fmt.Errorf("initialize state of %s: %w", key, err)
	}
	e.written = ver
	e.p.Store(p)
	return p, nil
}

// forget drops e if it is still key's entry, so the next use reloads.
func (m *Manager) forget(key Key, e *managed) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts[key] == e {
		delete(m.parts, key)
	}
}

// Drop forgets a share-partition (its group's offsets were altered or
// deleted); the next use reloads it.
func (m *Manager) Drop(key Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parts, key)
}

// DropGroup forgets every share-partition of group (its last share
// session on this broker closed): they reload from the share coordinator
// on next use, seeing offsets altered or deleted meanwhile.
func (m *Manager) DropGroup(group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.parts {
		if k.Group == group {
			delete(m.parts, k)
		}
	}
}

// Loaded returns key's share-partition if this broker has it loaded.
func (m *Manager) Loaded(key Key) *Partition {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.parts[key]; e != nil {
		return e.p.Load()
	}
	return nil
}

// Persist writes p's state if it changed since the last write and
// returns once the write is committed. Concurrent callers share writes:
// a write covers every change made before it took its snapshot. On a
// failed write the share-partition is dropped, so its next use reloads
// the last persisted state (the unpersisted change is undone).
func (m *Manager) Persist(key Key, p *Partition) error {
	m.mu.Lock()
	e := m.parts[key]
	m.mu.Unlock()
	if e == nil || e.p.Load() != p {
		return fmt.Errorf("share-partition %s: %w", key, ErrNotLoaded)
	}
	want := p.Version()
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if e.written >= want {
		return nil
	}
	st, ver := p.Snapshot()
	if !m.persister.Leads(key, e.leaderEpoch) {
		m.forget(key, e)
		return fmt.Errorf("share-partition %s: %w", key, ErrNotLoaded)
	}
	if err := m.persister.Write(key, st); err != nil {
		m.forget(key, e)
		return fmt.Errorf("write state of %s: %w", key, err)
	}
	e.written = ver
	return nil
}

// ErrNotLoaded: the share-partition was dropped (leadership moved or a
// write failed) while in use.
var ErrNotLoaded = errors.New("share-partition state is no longer loaded")

// Watch registers ch to receive a signal (non-blocking send) when
// records become available again (released, expired); ShareFetch
// long-polls use it next to partition.Watch.
func (m *Manager) Watch(ch chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waiters[ch] = struct{}{}
}

// Unwatch removes ch.
func (m *Manager) Unwatch(ch chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waiters, ch)
}

// Notify wakes the watchers.
func (m *Manager) Notify() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ch := range m.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// ReleaseMember releases what member holds on the given share-partitions
// (its share session closed) and persists the change.
func (m *Manager) ReleaseMember(group, member string, keys []Key) {
	released := false
	for _, k := range keys {
		p := m.Loaded(k)
		if p == nil {
			continue
		}
		if p.ReleaseMember(member, m.limits(group)) {
			released = true
		}
		if err := m.Persist(k, p); err != nil {
			m.log.Debug("persist released records", "share.partition", k.String(), "err", err)
		}
	}
	if released {
		m.Notify()
	}
}

func (m *Manager) sweepLoop(every time.Duration) {
	defer close(m.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			m.sweep(now)
		}
	}
}

// sweep releases expired acquisitions and drops partitions this broker
// no longer leads.
func (m *Manager) sweep(now time.Time) {
	m.mu.Lock()
	type item struct {
		key Key
		e   *managed
	}
	items := make([]item, 0, len(m.parts))
	for k, e := range m.parts {
		items = append(items, item{k, e})
	}
	m.mu.Unlock()
	released := false
	for _, it := range items {
		e := it.e
		p := e.p.Load()
		if p == nil {
			continue
		}
		if !m.persister.Leads(it.key, e.leaderEpoch) {
			m.forget(it.key, e)
			continue
		}
		if p.Expire(m.limits(it.key.Group), now) {
			released = true
		}
		if err := m.Persist(it.key, p); err != nil {
			m.log.Debug("persist expired acquisitions", "share.partition", it.key.String(), "err", err)
		}
	}
	if released {
		m.Notify()
	}
}
