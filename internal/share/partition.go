package share

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// RecordState is the delivery state of one record of a share-partition,
// with Kafka's persisted values.
type RecordState int8

const (
	// Available records may be acquired by any member.
	Available RecordState = 0
	// Acquired records are locked by one member until acknowledged,
	// released, or the acquisition lock expires.
	Acquired RecordState = 1
	// Acknowledged records were accepted by a consumer; they are never
	// delivered again.
	Acknowledged RecordState = 2
	// Archived records were rejected, skipped as gaps, or reached the
	// delivery count limit; they are never delivered again.
	Archived RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// AckType is an acknowledgement type of ShareFetch / ShareAcknowledge.
type AckType int8

const (
	AckGap     AckType = 0 // the offset holds no record for the consumer (archived)
	AckAccept  AckType = 1 // processed
	AckRelease AckType = 2 // give it to someone (maybe us) again
	AckReject  AckType = 3 // unprocessable (archived)
	AckRenew   AckType = 4 // extend the acquisition lock (KIP-1222)
)

// AckBatch is one acknowledgement batch: offsets FirstOffset..LastOffset
// with one type for all of them or one per offset.
type AckBatch struct {
	FirstOffset, LastOffset int64
	Types                   []AckType
}

// AcquiredRange is a run of records acquired by one ShareFetch, all with
// the same delivery count (a ShareFetch AcquiredRecords entry).
type AcquiredRange struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
}

// StateBatch is a run of in-flight records with one state and delivery
// count, as persisted (Kafka's PersisterStateBatch).
type StateBatch struct {
	FirstOffset, LastOffset int64
	State                   RecordState
	DeliveryCount           int16
}

// State is the persisted state of a share-partition: its start offset
// (SPSO), the epochs, and the in-flight records from the SPSO on.
// Acquired records are persisted as Available with their delivery count,
// so a new leader delivers them again.
type State struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	Batches     []StateBatch
}

// Limits are the share group settings a share-partition applies.
type Limits struct {
	LockDuration       time.Duration // share.record.lock.duration.ms
	DeliveryCountLimit int16         // group.share.delivery.count.limit
	MaxRecordLocks     int           // group.share.partition.max.record.locks
}

// Errors of Acknowledge, mapped to Kafka codes by the broker.
var (
	// ErrInvalidRecordState: an acknowledged offset is not acquired by
	// the member (INVALID_RECORD_STATE).
	ErrInvalidRecordState = errors.New("record is not acquired by this member")
	// ErrInvalidAck: malformed batches (INVALID_REQUEST).
	ErrInvalidAck = errors.New("invalid acknowledgement batch")
)

// entry is one in-flight record.
type entry struct {
	state    RecordState
	count    int16
	member   string
	deadline time.Time
}

// Partition is the share-partition state machine of one (group, topic,
// partition) on the partition's leader: the share-partition start offset
// (SPSO), the in-flight records [SPSO, end) with their state and
// delivery count, and acquisition locks. It keeps no record data.
//
// The broker's ShareFetch and ShareAcknowledge handlers and the lock
// sweeper call it. Safe for concurrent use: every method takes its mutex.
type Partition struct {
	stateEpoch  int32 // fixed at load
	leaderEpoch int32 // fixed at load

	mu      sync.Mutex
	start   int64   // SPSO
	recs    []entry // offsets start .. start+len(recs)-1
	version uint64  // bumped by every change that must be persisted
}

// NewPartition restores a share-partition from its persisted state at
// the given leader epoch.
func NewPartition(st State, leaderEpoch int32) *Partition {
	p := &Partition{stateEpoch: st.StateEpoch, leaderEpoch: leaderEpoch}
	p.start = st.StartOffset
	for _, b := range st.Batches {
		if b.LastOffset < st.StartOffset || b.FirstOffset > b.LastOffset {
			continue
		}
		for off := max(b.FirstOffset, st.StartOffset); off <= b.LastOffset; off++ {
			i := int(off - p.start)
			for len(p.recs) <= i {
				p.recs = append(p.recs, entry{})
			}
			s := b.State
			if s == Acquired {
				s = Available
			}
			p.recs[i] = entry{state: s, count: b.DeliveryCount}
		}
	}
	p.advanceLocked()
	return p
}

// LeaderEpoch is the leader epoch of the partition when this state was
// loaded.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// StartOffset is the SPSO.
func (p *Partition) StartOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start
}

// Version counts the changes that must be persisted; the broker writes
// the State after a change whose version is above what it wrote.
func (p *Partition) Version() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// end is one past the last in-flight offset.
func (p *Partition) endLocked() int64 { return p.start + int64(len(p.recs)) }

// advanceLocked moves the SPSO past acknowledged and archived records.
func (p *Partition) advanceLocked() {
	n := 0
	for n < len(p.recs) && (p.recs[n].state == Acknowledged || p.recs[n].state == Archived) {
		n++
	}
	if n > 0 {
		p.start += int64(n)
		p.recs = p.recs[n:]
		if len(p.recs) == 0 {
			p.recs = nil
		}
	}
}

// Acquire locks up to maxRecords available records below hwm for member
// and returns them as ranges. Records released earlier come first, then
// new ones from the end of the in-flight window, which may not grow
// beyond MaxRecordLocks records. Offsets below logStart (deleted by
// retention) are archived first. A record at the delivery count limit is
// archived instead of delivered.
func (p *Partition) Acquire(member string, logStart, hwm int64, maxRecords int, lim Limits, now time.Time) []AcquiredRange {
	p.mu.Lock()
	defer p.mu.Unlock()
	if logStart > p.start {
		// Retention moved the log start: what was below it is gone.
		drop := min(logStart-p.start, int64(len(p.recs)))
		p.recs = p.recs[drop:]
		p.start = logStart
		p.version++
	}
	var out []AcquiredRange
	got := 0
	deadline := now.Add(lim.LockDuration)
	take := func(off int64, e *entry) {
		e.state, e.member, e.deadline = Acquired, member, deadline
		e.count++
		got++
		if n := len(out); n > 0 && out[n-1].LastOffset == off-1 && out[n-1].DeliveryCount == e.count {
			out[n-1].LastOffset = off
			return
		}
		out = append(out, AcquiredRange{FirstOffset: off, LastOffset: off, DeliveryCount: e.count})
	}
	archived := false
	for i := range p.recs {
		if got >= maxRecords {
			break
		}
		off := p.start + int64(i)
		if off >= hwm {
			break
		}
		e := &p.recs[i]
		if e.state != Available {
			continue
		}
		if lim.DeliveryCountLimit > 0 && e.count >= lim.DeliveryCountLimit {
			e.state, e.member = Archived, ""
			archived = true
			continue
		}
		take(off, e)
	}
	for got < maxRecords && p.endLocked() < hwm && (lim.MaxRecordLocks <= 0 || len(p.recs) < lim.MaxRecordLocks) {
		p.recs = append(p.recs, entry{})
		take(p.endLocked()-1, &p.recs[len(p.recs)-1])
	}
	if archived {
		p.version++
		p.advanceLocked()
	}
	return out
}

// Unacquire gives back the acquisitions of member from offset from on
// (records the broker acquired but could not send: the response was
// full). Their delivery counts are restored.
func (p *Partition) Unacquire(member string, from int64, ranges []AcquiredRange) []AcquiredRange {
	p.mu.Lock()
	defer p.mu.Unlock()
	var kept []AcquiredRange
	for _, r := range ranges {
		for off := max(r.FirstOffset, from); off <= r.LastOffset; off++ {
			i := off - p.start
			if i < 0 || i >= int64(len(p.recs)) {
				continue
			}
			e := &p.recs[i]
			if e.state == Acquired && e.member == member {
				e.state, e.member = Available, ""
				e.count--
			}
		}
		if r.FirstOffset < from {
			r.LastOffset = min(r.LastOffset, from-1)
			kept = append(kept, r)
		}
	}
	// Trailing records never delivered shrink the window again.
	for n := len(p.recs); n > 0 && p.recs[n-1].state == Available && p.recs[n-1].count == 0; n-- {
		p.recs = p.recs[:n-1]
	}
	return kept
}

// Acknowledge applies member's acknowledgement batches atomically: all
// are checked first (every offset must be in flight and acquired by
// member), then applied. renew allows AckRenew. It reports whether a
// waiting fetch may now find records: some were released, or the SPSO
// moved, making room in the in-flight window.
func (p *Partition) Acknowledge(member string, batches []AckBatch, renew bool, lim Limits, now time.Time) (available bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := int64(-1)
	for _, b := range batches {
		if b.FirstOffset > b.LastOffset || b.FirstOffset <= prev || len(b.Types) == 0 ||
			(len(b.Types) > 1 && int64(len(b.Types)) != b.LastOffset-b.FirstOffset+1) {
			return false, ErrInvalidAck
		}
		for _, t := range b.Types {
			if t < AckGap || t > AckRenew || (t == AckRenew && !renew) {
				return false, ErrInvalidAck
			}
		}
		prev = b.LastOffset
		if b.FirstOffset < p.start {
			return false, fmt.Errorf("offset %d is below the share-partition start offset %d: %w", b.FirstOffset, p.start, ErrInvalidRecordState)
		}
		if b.LastOffset >= p.endLocked() {
			return false, fmt.Errorf("offsets %d-%d beyond the in-flight records (end %d): %w", b.FirstOffset, b.LastOffset, p.endLocked(), ErrInvalidRecordState)
		}
		for off := b.FirstOffset; off <= b.LastOffset; off++ {
			e := &p.recs[off-p.start]
			if e.state != Acquired || e.member != member {
				return false, fmt.Errorf("offset %d is %s: %w", off, e.state, ErrInvalidRecordState)
			}
		}
	}
	changed := false
	for _, b := range batches {
		for off := b.FirstOffset; off <= b.LastOffset; off++ {
			t := b.Types[0]
			if len(b.Types) > 1 {
				t = b.Types[off-b.FirstOffset]
			}
			e := &p.recs[off-p.start]
			switch t {
			case AckAccept:
				e.state, e.member = Acknowledged, ""
				changed = true
			case AckGap, AckReject:
				e.state, e.member = Archived, ""
				changed = true
			case AckRelease:
				if e.release(lim) {
					available = true
				}
				changed = true
			case AckRenew:
				e.deadline = now.Add(lim.LockDuration)
			}
		}
	}
	if changed {
		p.version++
		start := p.start
		p.advanceLocked()
		available = available || p.start != start
	}
	return available, nil
}

// release makes an acquired record available again, or archives it at
// the delivery count limit; it reports whether it became available.
func (e *entry) release(lim Limits) bool {
	e.member = ""
	if lim.DeliveryCountLimit > 0 && e.count >= lim.DeliveryCountLimit {
		e.state = Archived
		return false
	}
	e.state = Available
	return true
}

// ReleaseMember releases every record member holds (its share session
// closed or it left the group). It reports whether a waiting fetch may
// now find records (released ones, or room in the in-flight window).
func (p *Partition) ReleaseMember(member string, lim Limits) bool {
	return p.releaseIf(lim, func(e *entry) bool { return e.member == member })
}

// Expire releases records whose acquisition lock has expired at now.
func (p *Partition) Expire(lim Limits, now time.Time) bool {
	return p.releaseIf(lim, func(e *entry) bool { return !now.Before(e.deadline) })
}

func (p *Partition) releaseIf(lim Limits, match func(*entry) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	released, changed := false, false
	for i := range p.recs {
		e := &p.recs[i]
		if e.state != Acquired || !match(e) {
			continue
		}
		if e.release(lim) {
			released = true
		}
		changed = true
	}
	if changed {
		p.version++
		start := p.start
		p.advanceLocked()
		released = released || p.start != start // archived at the limit: room in the window
	}
	return released
}

// HasAvailable reports whether a fetch below hwm would find records:
// released ones, or new ones the in-flight window has room for.
func (p *Partition) HasAvailable(hwm int64, lim Limits) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.recs {
		if p.start+int64(i) >= hwm {
			break
		}
		if p.recs[i].state == Available {
			return true
		}
	}
	return p.endLocked() < hwm && (lim.MaxRecordLocks <= 0 || len(p.recs) < lim.MaxRecordLocks)
}

// Snapshot is the state to persist and the version it reflects.
func (p *Partition) Snapshot() (State, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := State{StateEpoch: p.stateEpoch, LeaderEpoch: p.leaderEpoch, StartOffset: p.start}
	for i, e := range p.recs {
		off := p.start + int64(i)
		state := e.state
		if state == Acquired {
			state = Available
		}
		if n := len(st.Batches); n > 0 {
			last := &st.Batches[n-1]
			if last.LastOffset == off-1 && last.State == state && last.DeliveryCount == e.count {
				last.LastOffset = off
				continue
			}
		}
		st.Batches = append(st.Batches, StateBatch{FirstOffset: off, LastOffset: off, State: state, DeliveryCount: e.count})
	}
	return st, p.version
}

// InFlight describes the in-flight records for DescribeShareGroupOffsets
// and tests: the SPSO, one past the last in-flight offset, and how many
// records are acquired.
func (p *Partition) InFlight() (start, end int64, acquired int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.recs {
		if e.state == Acquired {
			acquired++
		}
	}
	return p.start, p.endLocked(), acquired
}
