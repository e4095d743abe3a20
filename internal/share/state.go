package share

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// Key names a share-partition: the share group, and the topic id and
// partition index of the topic-partition it consumes.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// String is Kafka's share coordinator key, "group:topicId:partition"
// (the topic id as raw bytes in hex; only hashed and logged).
func (k Key) String() string { return fmt.Sprintf("%s:%x:%d", k.Group, k.TopicID, k.Partition) }

// snapshotRecordType is the key version of a ShareSnapshot record, as
// Kafka's CoordinatorRecordType numbers it.
const snapshotRecordType = 0

// ErrCorruptRecord is a __share_group_state record that does not decode.
var ErrCorruptRecord = errors.New("corrupt share state record")

// EncodeKey is the record key of k's state: int16 record type (0,
// ShareSnapshot), int16-length group id, 16-byte topic id, int32
// partition.
func EncodeKey(k Key) []byte {
	b := make([]byte, 0, 2+2+len(k.Group)+16+4)
	b = binary.BigEndian.AppendUint16(b, snapshotRecordType)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Group)))
	b = append(b, k.Group...)
	b = append(b, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(k.Partition))
}

// DecodeKey parses EncodeKey's output.
func DecodeKey(b []byte) (Key, error) {
	var k Key
	if len(b) < 4 || binary.BigEndian.Uint16(b) != snapshotRecordType {
		return k, fmt.Errorf("key: %w", ErrCorruptRecord)
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if len(b) != 4+n+16+4 {
		return k, fmt.Errorf("key length %d: %w", len(b), ErrCorruptRecord)
	}
	k.Group = string(b[4 : 4+n])
	copy(k.TopicID[:], b[4+n:])
	k.Partition = int32(binary.BigEndian.Uint32(b[4+n+16:]))
	return k, nil
}

// EncodeState is the record value of a ShareSnapshot: int16 version (0),
// int32 state epoch, int32 leader epoch, int64 start offset, int32 batch
// count, then per batch int64 first offset, int64 last offset, int8
// delivery state, int16 delivery count.
func EncodeState(st State) []byte {
	b := make([]byte, 0, 2+4+4+8+4+len(st.Batches)*19)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(st.StateEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(st.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(st.StartOffset))
	b = binary.BigEndian.AppendUint32(b, uint32(len(st.Batches)))
	for _, sb := range st.Batches {
		b = binary.BigEndian.AppendUint64(b, uint64(sb.FirstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(sb.LastOffset))
		b = append(b, byte(sb.State))
		b = binary.BigEndian.AppendUint16(b, uint16(sb.DeliveryCount))
	}
	return b
}

// DecodeState parses EncodeState's output.
func DecodeState(b []byte) (State, error) {
	var st State
	if len(b) < 22 || binary.BigEndian.Uint16(b) != 0 {
		return st, fmt.Errorf("value: %w", ErrCorruptRecord)
	}
	st.StateEpoch = int32(binary.BigEndian.Uint32(b[2:]))
	st.LeaderEpoch = int32(binary.BigEndian.Uint32(b[6:]))
	st.StartOffset = int64(binary.BigEndian.Uint64(b[10:]))
	n := int(binary.BigEndian.Uint32(b[18:]))
	b = b[22:]
	if n < 0 || len(b) != n*19 {
		return st, fmt.Errorf("value with %d batches in %d bytes: %w", n, len(b), ErrCorruptRecord)
	}
	if n > 0 {
		st.Batches = make([]StateBatch, n)
	}
	for i := range st.Batches {
		st.Batches[i] = StateBatch{
			FirstOffset:   int64(binary.BigEndian.Uint64(b)),
			LastOffset:    int64(binary.BigEndian.Uint64(b[8:])),
			State:         RecordState(b[16]),
			DeliveryCount: int16(binary.BigEndian.Uint16(b[17:])),
		}
		b = b[19:]
	}
	return st, nil
}

// StateLog is one partition of __share_group_state as the share
// coordinator uses it; the broker implements it over a partition it
// leads. Append returns once the batch is committed (the high watermark
// passed it).
type StateLog interface {
	Append(batch []byte) error
	Replay(fn func(batch []byte) error) error
}

// StateStore is the share coordinator: for each __share_group_state
// partition this broker leads, the latest State of every share-partition
// whose key maps there, rebuilt by replaying the partition and kept
// current by Write. The broker's ReadShareGroupState and
// WriteShareGroupState handlers (and the share-partition leader on the
// same broker) call it. Safe for concurrent use; writes to one state
// partition are serialised.
type StateStore struct {
	mu    sync.Mutex
	parts map[int32]*statePartition
}

type statePartition struct {
	leaderEpoch int32
	log         StateLog

	mu     sync.Mutex // serialises appends so the map follows the log
	states map[Key]State
}

// NewStateStore returns an empty store.
func NewStateStore() *StateStore { return &StateStore{parts: map[int32]*statePartition{}} }

// partition returns state partition p loaded at leaderEpoch, replaying
// log when it was not loaded, was loaded under another leader epoch, or
// from another log: a __share_group_state deleted and created again is a
// new log whose leader epoch starts over. StateLogs must be comparable.
func (s *StateStore) partition(p, leaderEpoch int32, log StateLog) (*statePartition, error) {
	s.mu.Lock()
	sp := s.parts[p]
	s.mu.Unlock()
	if sp != nil && sp.leaderEpoch == leaderEpoch && sp.log == log {
		return sp, nil
	}
	sp = &statePartition{leaderEpoch: leaderEpoch, log: log, states: map[Key]State{}}
	err := log.Replay(func(batch []byte) error {
		h, err := record.ParseHeader(batch)
		if err != nil {
			return err
		}
		if h.IsControl() {
			return nil
		}
		recs, err := record.Records(batch, 64<<20)
		if err != nil {
			return err
		}
		for _, r := range recs {
			k, err := DecodeKey(r.Key)
			if err != nil {
				return err
			}
			if r.Value == nil {
				delete(sp.states, k)
				continue
			}
			st, err := DecodeState(r.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			sp.states[k] = st
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load __share_group_state-%d: %w", p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.parts[p]; cur != nil && cur.leaderEpoch == leaderEpoch && cur.log == log {
		return cur, nil // loaded concurrently
	}
	s.parts[p] = sp
	return sp, nil
}

// Unload forgets state partition p (this broker no longer leads it).
func (s *StateStore) Unload(p int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.parts, p)
}

// Read returns the state of key from state partition p, led by this
// broker at leaderEpoch; ok is false when the share-partition has no
// state yet.
func (s *StateStore) Read(p, leaderEpoch int32, log StateLog, key Key) (st State, ok bool, err error) {
	sp, err := s.partition(p, leaderEpoch, log)
	if err != nil {
		return State{}, false, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	st, ok = sp.states[key]
	return st, ok, nil
}

// ErrFencedStateEpoch: a write carries an older state epoch than the
// stored state (FENCED_STATE_EPOCH).
var ErrFencedStateEpoch = errors.New("share-partition state epoch is older than the stored one")

// ErrFencedLeaderEpoch: a write comes from a share-partition leader
// older than the one that wrote the stored state (FENCED_LEADER_EPOCH).
var ErrFencedLeaderEpoch = errors.New("share-partition leader epoch is older than the stored one")

// Write persists st as key's state and returns once it is committed.
// A write from an older leader epoch or state epoch than the stored
// state is refused, so a deposed share-partition leader cannot overwrite
// its successor's state.
func (s *StateStore) Write(p, leaderEpoch int32, log StateLog, key Key, st State) error {
	sp, err := s.partition(p, leaderEpoch, log)
	if err != nil {
		return err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	tombstone := st.StartOffset < 0 && len(st.Batches) == 0
	if cur, ok := sp.states[key]; ok && !tombstone {
		if st.StateEpoch < cur.StateEpoch {
			return ErrFencedStateEpoch
		}
		if st.StateEpoch == cur.StateEpoch && st.LeaderEpoch < cur.LeaderEpoch {
			return ErrFencedLeaderEpoch
		}
	}
	var value []byte
	if !tombstone {
		value = EncodeState(st)
	}
	batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Key: EncodeKey(key), Value: value}})
	if err := log.Append(batch); err != nil {
		// What was appended may or may not commit: reload on next use.
		s.mu.Lock()
		if s.parts[p] == sp {
			delete(s.parts, p)
		}
		s.mu.Unlock()
		return err
	}
	if value == nil {
		delete(sp.states, key)
	} else {
		sp.states[key] = st
	}
	return nil
}

// Delete removes key's state (DeleteShareGroupState) with a tombstone.
func (s *StateStore) Delete(p, leaderEpoch int32, log StateLog, key Key) error {
	return s.Write(p, leaderEpoch, log, key, State{StartOffset: -1})
}

// Keys lists the share-partitions of group with state in partition p
// (DescribeShareGroupOffsets, DeleteShareGroupOffsets).
func (s *StateStore) Keys(p, leaderEpoch int32, log StateLog, group string) ([]Key, error) {
	sp, err := s.partition(p, leaderEpoch, log)
	if err != nil {
		return nil, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var out []Key
	for k := range sp.states {
		if k.Group == group {
			out = append(out, k)
		}
	}
	return out, nil
}
