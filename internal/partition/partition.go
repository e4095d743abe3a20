package partition

import (
	"errors"
	"fmt"
	"sync"

	"github.com/silkworm/silkworm/internal/storage"
)

// ErrNotLeader means this replica is not the partition's leader.
var ErrNotLeader = errors.New("not the leader for this partition")

// Partition is one replica of a partition. Safe for concurrent use.
type Partition struct {
	Topic    string
	Index    int32
	TopicID  [16]byte
	Log      *storage.Log
	appendMu sync.Mutex // serialises appends so the high watermark moves in order
	mu       sync.Mutex // guards the fields below
	leader   bool
	epoch    int32
	hw       storage.Position
	waiters  map[chan struct{}]struct{}
}

// New wraps log as the leader replica at leaderEpoch.
func New(topic string, index int32, topicID [16]byte, log *storage.Log, leaderEpoch int32) *Partition {
	log.SetHighWatermark(log.LogEndOffset())
	// A new leader records where its epoch starts, as Kafka does, so that
	// OffsetForLeaderEpoch answers even before the first append.
	if eps := log.LeaderEpochs(); len(eps) == 0 || eps[len(eps)-1].Epoch < leaderEpoch {
		_ = log.AssignLeaderEpoch(leaderEpoch, log.LogEndOffset())
	}
	return &Partition{
		Topic:   topic,
		Index:   index,
		TopicID: topicID,
		Log:     log,
		leader:  true,
		epoch:   leaderEpoch,
		hw:      log.EndPosition(),
		waiters: map[chan struct{}]struct{}{},
	}
}

// String names the partition as Kafka does: topic-partition.
func (p *Partition) String() string { return fmt.Sprintf("%s-%d", p.Topic, p.Index) }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// IsLeader reports whether this replica leads the partition.
func (p *Partition) IsLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader
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

// AppendAsLeader appends one validated batch, assigning offsets, and
// advances the high watermark (single replica ISR). A duplicate batch
// from an idempotent producer is reported with its original offsets.
func (p *Partition) AppendAsLeader(batch []byte) (storage.AppendResult, error) {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	p.mu.Lock()
	leader, epoch := p.leader, p.epoch
	p.mu.Unlock()
	if !leader {
		return storage.AppendResult{}, ErrNotLeader
	}
	res, err := p.Log.Append(batch, storage.AppendOptions{AssignOffsets: true, LeaderEpoch: epoch})
	if err != nil || res.Duplicate {
		return res, err
	}
	p.advanceHighWatermark(res.EndPosition)
	return res, nil
}

// advanceHighWatermark moves the high watermark forward and wakes waiters.
func (p *Partition) advanceHighWatermark(pos storage.Position) {
	p.mu.Lock()
	if pos.Offset <= p.hw.Offset {
		p.mu.Unlock()
		return
	}
	p.hw = pos
	p.Log.SetHighWatermark(pos.Offset)
	for w := range p.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
}

// ResetHighWatermark sets the high watermark to the log end; used after
// the log start moved past it or the log was truncated.
func (p *Partition) ResetHighWatermark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw = p.Log.EndPosition()
	p.Log.SetHighWatermark(p.hw.Offset)
}

// Watch registers w to receive a non-blocking send whenever the high
// watermark moves. The caller must Unwatch it.
func (p *Partition) Watch(w chan struct{}) {
	p.mu.Lock()
	p.waiters[w] = struct{}{}
	p.mu.Unlock()
}

// Unwatch removes a waiter registered with Watch.
func (p *Partition) Unwatch(w chan struct{}) {
	p.mu.Lock()
	delete(p.waiters, w)
	p.mu.Unlock()
}
