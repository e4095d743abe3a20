package partition

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/silkworm/silkworm/internal/storage"
)

// Errors of partition operations; the broker maps them to Kafka codes.
var (
	// ErrNotLeader means this replica is not the partition's leader.
	ErrNotLeader = errors.New("not the leader for this partition")
	// ErrNotFollower means a replica fetch or follower append reached a
	// replica in the wrong role.
	ErrNotFollower = errors.New("not a follower for this partition")
	// ErrNotEnoughReplicas means the ISR is smaller than min.insync.replicas
	// before an acks=all append.
	ErrNotEnoughReplicas = errors.New("not enough in-sync replicas")
	// ErrUnknownReplica means a replica fetch came from a broker that is not
	// in the partition's replica set.
	ErrUnknownReplica = errors.New("replica is not in the partition's replica set")
)

// follower is the leader's view of one follower replica.
type follower struct {
	leo          int64     // log end offset the follower last fetched from
	logStart     int64     // its log start offset, as its last fetch said; -1 unknown
	lastCaughtUp time.Time // last time its fetch reached the leader's log end
	lastFetch    time.Time
}

// Partition is one replica of a partition. Safe for concurrent use.
type Partition struct {
	Topic   string
	Index   int32
	TopicID [16]byte
	Log     *storage.Log
	NodeID  int32

	appendMu sync.Mutex // serialises appends so the high watermark moves in order

	mu             sync.Mutex // guards the fields below
	leader         int32      // current leader's node id, -1 if none
	epoch          int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32
	// expanding is a replica the leader asked the controller to add to
	// the ISR; until the answer it counts for the high watermark, as
	// Kafka's "maximal ISR" (KIP-497), so that nothing is committed that
	// the replica lacks should it join.
	expanding []int32
	followers map[int32]*follower // leader only
	hw        storage.Position
	// hwAt is hw for readers that hold no lock: the WakeConds of waiters
	// woken by another partition.
	hwAt atomic.Pointer[storage.Position]
	// waiters are woken when the high watermark moves (consumers' parked
	// fetches, acks=all produces), each only when its condition holds;
	// endWaiters also when the log end moves (followers').
	waiters    map[chan struct{}]waiter
	endWaiters map[chan struct{}]struct{}
}

// A WakeCond tells whether a high watermark move may change the answer of
// a waiter (registered with WatchIf): a consumer's fetch parked until
// fetch.min.bytes are there, as Kafka's DelayedFetch.tryComplete reckons
// it on each append instead of waking its request. Wakes is called with
// the lock of the partition that moved held, possibly by several
// partitions at once, so it must only read: log ends and positions, and
// HighWatermarkAt, never a partition's lock.
type WakeCond interface {
	Wakes() bool
}

// waiter is how a high watermark move decides to wake one waiter; a change
// of role or of a follower's log start wakes every waiter regardless.
type waiter struct {
	hw   int64    // woken only once the high watermark reaches this
	cond WakeCond // and, when set, only if it says so
}

// New wraps log as broker nodeID's leader replica at leaderEpoch, with
// itself as the only replica (the single-node case). MakeLeader and
// MakeFollower change the role and replica set later.
func New(topic string, index int32, topicID [16]byte, log *storage.Log, nodeID, leaderEpoch int32) *Partition {
	p := &Partition{
		Topic:      topic,
		Index:      index,
		TopicID:    topicID,
		Log:        log,
		leader:     -1,
		waiters:    map[chan struct{}]waiter{},
		endWaiters: map[chan struct{}]struct{}{},
	}
	p.storeHighWatermarkLocked(log.EndPosition())
	p.MakeLeader(nodeID, leaderEpoch, 0, []int32{nodeID}, []int32{nodeID}, time.Now())
	return p
}

// NewReplica wraps log for broker nodeID without a role yet; the caller
// follows with MakeLeader or MakeFollower.
func NewReplica(topic string, index int32, topicID [16]byte, log *storage.Log, nodeID int32) *Partition {
	p := &Partition{
		Topic:      topic,
		Index:      index,
		TopicID:    topicID,
		Log:        log,
		NodeID:     nodeID,
		leader:     -1,
		epoch:      -1,
		waiters:    map[chan struct{}]waiter{},
		endWaiters: map[chan struct{}]struct{}{},
	}
	// A replica does not know the committed offset until its leader tells
	// it; start from what this log had checkpointed: its recovery point
	// bounded by its end.
	hw := min(log.RecoveryPoint(), log.LogEndOffset())
	pos, err := log.PositionOf(max(hw, log.LogStartOffset()))
	if err != nil {
		pos = log.EndPosition()
	}
	p.storeHighWatermarkLocked(pos)
	return p
}

// String names the partition as Kafka does: topic-partition.
func (p *Partition) String() string { return fmt.Sprintf("%s-%d", p.Topic, p.Index) }

// MakeLeader makes this replica the leader at epoch with the given
// replica set and ISR. The new epoch is recorded in the leader epoch cache
// at the log end offset, as Kafka's leader does before its first append.
func (p *Partition) MakeLeader(nodeID, epoch, partitionEpoch int32, replicas, isr []int32, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.NodeID = nodeID
	wasLeader := p.leader == nodeID && p.epoch == epoch
	p.leader, p.epoch, p.partitionEpoch = nodeID, epoch, partitionEpoch
	p.replicas, p.isr = slices.Clone(replicas), slices.Clone(isr)
	if !wasLeader {
		p.expanding = nil
		p.followers = map[int32]*follower{}
		if eps := p.Log.LeaderEpochs(); len(eps) == 0 || eps[len(eps)-1].Epoch < epoch {
			_ = p.Log.AssignLeaderEpoch(epoch, p.Log.LogEndOffset())
		}
	}
	for _, r := range replicas {
		if r != nodeID && p.followers[r] == nil {
			// Kafka starts a new leader's followers as caught up at the
			// moment of election, so that the ISR does not shrink at once.
			p.followers[r] = &follower{leo: -1, logStart: -1, lastCaughtUp: now}
		}
	}
	p.maybeAdvanceHighWatermarkLocked()
}

// MakeFollower makes this replica a follower of leader at epoch.
func (p *Partition) MakeFollower(nodeID, leader, epoch, partitionEpoch int32, replicas, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.NodeID = nodeID
	p.leader, p.epoch, p.partitionEpoch = leader, epoch, partitionEpoch
	p.replicas, p.isr = slices.Clone(replicas), slices.Clone(isr)
	p.followers = nil
	p.expanding = nil
	p.wakeAllLocked() // waiters for a high watermark find the replica no longer leads
}

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// Leader is the node id of the current leader, -1 if none.
func (p *Partition) Leader() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader
}

// IsLeader reports whether this replica leads the partition; false for a
// nil partition (no local replica).
func (p *Partition) IsLeader() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader == p.NodeID && p.leader >= 0
}

// ISR returns the in-sync replica set as last applied.
func (p *Partition) ISR() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.isr)
}

// Replicas returns the replica set.
func (p *Partition) Replicas() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.replicas)
}

// PartitionEpoch is the epoch of the partition's metadata (bumped by every
// ISR or replica change).
func (p *Partition) PartitionEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.partitionEpoch
}

// HighWatermark is the offset up to which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw.Offset
}

// HighWatermarkPosition is the high watermark with its place in the log,
// so reads bounded by it need no scan.
func (p *Partition) HighWatermarkPosition() storage.Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw
}

// LastStableOffset is the offset below which every transaction is
// decided: the first offset of the oldest ongoing transaction, or the
// high watermark when that is smaller (or no transaction is open).
// read_committed consumers read up to it.
func (p *Partition) LastStableOffset() int64 {
	return p.LastStablePosition().Offset
}

// LastStablePosition is LastStableOffset with its place in the log.
func (p *Partition) LastStablePosition() storage.Position {
	hw := p.HighWatermarkPosition()
	first, ok := p.Log.FirstUnstableOffset()
	if !ok || first >= hw.Offset {
		return hw
	}
	pos, err := p.Log.PositionOf(max(first, p.Log.LogStartOffset()))
	if err != nil {
		return hw
	}
	return pos
}

// AppendAsLeader appends one validated batch, assigning offsets. When
// minISR > 0 (acks=all) the ISR must hold at least minISR replicas. The high
// watermark moves when the ISR has the batch (at once when the leader is
// the only ISR member). A duplicate batch from an idempotent producer is
// reported with its original offsets.
func (p *Partition) AppendAsLeader(batch []byte, minISR int) (storage.AppendResult, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	p.mu.Lock()
	leader, epoch, isrLen := p.leader == p.NodeID && p.leader >= 0, p.epoch, len(p.isr)
	p.mu.Unlock()
	if !leader {
		return storage.AppendResult{}, ErrNotLeader
	}
	if minISR > 0 && isrLen < minISR {
		return storage.AppendResult{}, fmt.Errorf("%w: ISR has %d, min.insync.replicas is %d", ErrNotEnoughReplicas, isrLen, minISR)
	}
	res, err := p.Log.Append(batch, storage.AppendOptions{AssignOffsets: true, LeaderEpoch: epoch})
	if err != nil || res.Duplicate {
		return res, err
	}
	p.mu.Lock()
	if !p.maybeAdvanceHighWatermarkLocked() {
		// The log end moved even if the high watermark did not: followers
		// parked in a long-poll fetch must see the new data now. Consumers
		// read up to the high watermark: nothing new for them.
		wake(p.endWaiters)
	}
	p.mu.Unlock()
	return res, nil
}

// ISRSize is the number of in-sync replicas.
func (p *Partition) ISRSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.isr)
}

// maybeAdvanceHighWatermarkLocked sets the high watermark to the smallest
// log end offset of the ISR (the leader's own included) when that is
// larger, and wakes waiters. It reports whether the high watermark moved.
func (p *Partition) maybeAdvanceHighWatermarkLocked() bool {
	if p.leader != p.NodeID || p.leader < 0 {
		return false
	}
	end := p.Log.EndPosition()
	hw := end.Offset
	for _, set := range [2][]int32{p.isr, p.expanding} {
		for _, r := range set {
			if r == p.NodeID {
				continue
			}
			f := p.followers[r]
			if f == nil || f.leo < 0 {
				hw = min(hw, p.hw.Offset)
				continue
			}
			hw = min(hw, f.leo)
		}
	}
	if hw <= p.hw.Offset {
		return false
	}
	pos := end
	if hw != end.Offset {
		var err error
		if pos, err = p.Log.PositionOf(hw); err != nil {
			return false
		}
	}
	p.setHighWatermarkLocked(pos)
	return true
}

func (p *Partition) setHighWatermarkLocked(pos storage.Position) {
	p.storeHighWatermarkLocked(pos)
	p.Log.SetHighWatermark(pos.Offset)
	for w, wt := range p.waiters {
		if pos.Offset >= wt.hw && (wt.cond == nil || wt.cond.Wakes()) {
			signal(w)
		}
	}
	wake(p.endWaiters)
}

func (p *Partition) storeHighWatermarkLocked(pos storage.Position) {
	p.hw = pos
	p.hwAt.Store(&pos)
}

// HighWatermarkAt is HighWatermarkPosition without the partition's lock,
// for a WakeCond.
func (p *Partition) HighWatermarkAt() storage.Position {
	if at := p.hwAt.Load(); at != nil {
		return *at
	}
	return storage.Position{}
}

// wakeAllLocked signals every waiter, of the high watermark and of the
// log end, without blocking and without asking their conditions.
func (p *Partition) wakeAllLocked() {
	for w := range p.waiters {
		signal(w)
	}
	wake(p.endWaiters)
}

func wake(set map[chan struct{}]struct{}) {
	for w := range set {
		signal(w)
	}
}

func signal(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// UpdateFollower records a replica fetch at fetchOffset from follower id
// (leader side). It returns whether the follower is out of the ISR but
// caught up to the high watermark, i.e. a candidate for ISR expansion.
func (p *Partition) UpdateFollower(id int32, fetchOffset int64, now time.Time) (expand bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader != p.NodeID {
		return false, ErrNotLeader
	}
	f := p.followers[id]
	if f == nil {
		return false, ErrUnknownReplica
	}
	f.lastFetch = now
	f.leo = fetchOffset
	if fetchOffset >= p.Log.LogEndOffset() {
		f.lastCaughtUp = now
	}
	p.maybeAdvanceHighWatermarkLocked()
	return !slices.Contains(p.isr, id) && fetchOffset >= p.hw.Offset, nil
}

// LaggingFollowers returns the ISR members (other than the leader) that
// have not caught up to the log end within maxLag.
func (p *Partition) LaggingFollowers(now time.Time, maxLag time.Duration) []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader != p.NodeID {
		return nil
	}
	var out []int32
	for _, r := range p.isr {
		if r == p.NodeID {
			continue
		}
		if f := p.followers[r]; f == nil || now.Sub(f.lastCaughtUp) > maxLag {
			out = append(out, r)
		}
	}
	return out
}

// ExpandISR records that the leader asked for replica to join the ISR:
// until SetISR or CancelExpandISR it counts for the high watermark.
func (p *Partition) ExpandISR(replica int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.isr, replica) && !slices.Contains(p.expanding, replica) {
		p.expanding = append(p.expanding, replica)
	}
}

// CancelExpandISR forgets a request of ExpandISR the controller refused.
func (p *Partition) CancelExpandISR(replica int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expanding = slices.DeleteFunc(p.expanding, func(r int32) bool { return r == replica })
	p.maybeAdvanceHighWatermarkLocked()
}

// SetISR applies an ISR change committed by the controller.
func (p *Partition) SetISR(isr []int32, partitionEpoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expanding = nil
	p.isr = slices.Clone(isr)
	p.partitionEpoch = partitionEpoch
	p.maybeAdvanceHighWatermarkLocked()
}

// AppendAsFollower appends batches fetched from the leader, keeping their
// offsets and leader epochs.
func (p *Partition) AppendAsFollower(batch []byte) (storage.AppendResult, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	return p.Log.Append(batch, storage.AppendOptions{AssignOffsets: false})
}

// UpdateFollowerHighWatermark sets a follower's high watermark from its
// leader's: the smaller of the leader's and this log's end. hints are
// positions the caller knows (e.g. the log end before and after the
// batches just appended): a high watermark at one of them needs no
// search of the log.
func (p *Partition) UpdateFollowerHighWatermark(leaderHW int64, hints ...storage.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw := min(leaderHW, p.Log.LogEndOffset())
	if hw == p.hw.Offset {
		return
	}
	for _, h := range hints {
		if h.Offset == hw && hw >= p.Log.LogStartOffset() {
			p.setHighWatermarkLocked(h)
			return
		}
	}
	pos, err := p.Log.PositionOf(max(hw, p.Log.LogStartOffset()))
	if err != nil {
		return
	}
	p.setHighWatermarkLocked(pos)
}

// ResetHighWatermark sets the high watermark to the log end; used after
// the log start moved past it or the log was truncated.
func (p *Partition) ResetHighWatermark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.storeHighWatermarkLocked(p.Log.EndPosition())
	p.Log.SetHighWatermark(p.hw.Offset)
}

// Watch registers w to receive a non-blocking send whenever the high
// watermark moves (or the role, or a follower's log start offset): what
// a consumer's parked fetch, which reads up to the high watermark, waits
// for. An append that does not move the high watermark does not wake it.
// The caller must Unwatch it.
func (p *Partition) Watch(w chan struct{}) { p.watch(w, waiter{}) }

// WatchHighWatermark is Watch for a wait until the high watermark reaches
// offset (an acks=all produce): a move short of it does not wake w.
func (p *Partition) WatchHighWatermark(w chan struct{}, offset int64) {
	p.watch(w, waiter{hw: offset})
}

// WatchIf is Watch for a waiter that a high watermark move concerns only
// when cond says so. cond must be safe to call from the moment WatchIf is.
func (p *Partition) WatchIf(w chan struct{}, cond WakeCond) { p.watch(w, waiter{cond: cond}) }

func (p *Partition) watch(w chan struct{}, wt waiter) {
	p.mu.Lock()
	p.waiters[w] = wt
	p.mu.Unlock()
}

// WatchLogEnd is Watch for a follower's parked fetch, which reads up to
// the log end: w is also woken by every leader append.
func (p *Partition) WatchLogEnd(w chan struct{}) {
	p.mu.Lock()
	p.endWaiters[w] = struct{}{}
	p.mu.Unlock()
}

// Waiting returns how many waiters are registered with Watch and with
// WatchLogEnd: the parked consumer and follower fetches (and acks=all
// produces) of this replica.
func (p *Partition) Waiting() (hw, logEnd int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters), len(p.endWaiters)
}

// Unwatch removes a waiter registered with Watch or WatchLogEnd.
func (p *Partition) Unwatch(w chan struct{}) {
	p.mu.Lock()
	delete(p.waiters, w)
	delete(p.endWaiters, w)
	p.mu.Unlock()
}

// SetFollowerLogStart records the log start offset follower id reported in
// its last fetch, for LowWatermark, and wakes waiters when it moved.
func (p *Partition) SetFollowerLogStart(id int32, logStart int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.followers[id]
	if f == nil || f.logStart == logStart {
		return
	}
	f.logStart = logStart
	p.wakeAllLocked()
}

// LowWatermark is the smallest log start offset among the leader and the
// in-sync followers that reported one (Kafka's lowWatermarkIfLeader, which
// counts the followers on live brokers): DeleteRecords is done once it
// reaches the requested offset.
func (p *Partition) LowWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	low := p.Log.LogStartOffset()
	for _, id := range p.isr {
		if f := p.followers[id]; f != nil && f.logStart >= 0 {
			low = min(low, f.logStart)
		}
	}
	return low
}

// ReplicaView is an in-sync follower as its leader sees it, for choosing a
// consumer's preferred read replica (Kafka's ReplicaView).
type ReplicaView struct {
	ID            int32
	LogEnd        int64         // the log end offset of its last fetch
	SinceCaughtUp time.Duration // since its fetch last reached the leader's log end
}

// InSyncFollowersHolding returns the in-sync followers whose log holds
// offset, as Kafka's findPreferredReadReplica filters them: log end at or
// past it, log start (as last reported; unknown counts as 0) at or before.
// Nil unless this replica leads.
func (p *Partition) InSyncFollowersHolding(offset int64, now time.Time) []ReplicaView {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader != p.NodeID {
		return nil
	}
	var out []ReplicaView
	for _, id := range p.isr {
		f := p.followers[id]
		if id == p.NodeID || f == nil || f.leo < offset || f.logStart > offset {
			continue
		}
		out = append(out, ReplicaView{ID: id, LogEnd: f.leo, SinceCaughtUp: now.Sub(f.lastCaughtUp)})
	}
	return out
}
