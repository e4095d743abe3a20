package share

import (
	"errors"
	"reflect"
	"testing"

	"github.com/silkworm/silkworm/internal/record"
)

// memLog is a StateLog in memory.
type memLog struct {
	batches [][]byte
	fail    error
}

func (l *memLog) Append(b []byte) error {
	if l.fail != nil {
		return l.fail
	}
	l.batches = append(l.batches, append([]byte(nil), b...))
	return nil
}

func (l *memLog) Replay(fn func([]byte) error) error {
	for _, b := range l.batches {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

func TestStateRecordRoundTrip(t *testing.T) {
	k := Key{Group: "g", TopicID: [16]byte{1, 2, 3}, Partition: 7}
	got, err := DecodeKey(EncodeKey(k))
	if err != nil || got != k {
		t.Fatalf("key %v %v, want %v", got, err, k)
	}
	st := State{StateEpoch: 3, LeaderEpoch: 9, StartOffset: 100, Batches: []StateBatch{{100, 104, Acknowledged, 1}, {105, 105, Available, 4}}}
	back, err := DecodeState(EncodeState(st))
	if err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("state %+v %v, want %+v", back, err, st)
	}
	if _, err := DecodeState(EncodeState(st)[:30]); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("truncated value: %v", err)
	}
}

func TestStateStoreWriteReadReplayAndFencing(t *testing.T) {
	log := &memLog{}
	s := NewStateStore()
	k := Key{Group: "g", TopicID: [16]byte{9}, Partition: 0}
	if _, ok, err := s.Read(0, 1, log, k); ok || err != nil {
		t.Fatalf("read before write: %v %v", ok, err)
	}
	st := State{StateEpoch: 1, LeaderEpoch: 5, StartOffset: 10}
	if err := s.Write(0, 1, log, k, st); err != nil {
		t.Fatal(err)
	}
	// A deposed share-partition leader (older leader epoch) is fenced.
	if err := s.Write(0, 1, log, k, State{StateEpoch: 1, LeaderEpoch: 4, StartOffset: 3}); !errors.Is(err, ErrFencedLeaderEpoch) {
		t.Fatalf("older leader epoch: %v", err)
	}
	if err := s.Write(0, 1, log, k, State{StateEpoch: 0, LeaderEpoch: 6, StartOffset: 3}); !errors.Is(err, ErrFencedStateEpoch) {
		t.Fatalf("older state epoch: %v", err)
	}
	// A new coordinator leader epoch replays the log.
	s2 := NewStateStore()
	got, ok, err := s2.Read(0, 2, log, k)
	if err != nil || !ok || !reflect.DeepEqual(got, st) {
		t.Fatalf("replayed %+v %v %v, want %+v", got, ok, err, st)
	}
	if err := s2.Delete(0, 2, log, k); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := NewStateStore().Read(0, 3, log, k); ok {
		t.Fatalf("state survived its tombstone")
	}
	// Every record is a valid v2 batch.
	for _, b := range log.batches {
		if _, err := record.Records(b, 1<<20); err != nil {
			t.Fatalf("batch: %v", err)
		}
	}
	// A failed append leaves the store to reload.
	log.fail = errors.New("disk gone")
	if err := s2.Write(0, 2, log, k, st); err == nil {
		t.Fatalf("write succeeded on a failing log")
	}
}

// TestStateStoreNewLogAtTheSameEpoch: a __share_group_state partition
// deleted and created again is a new, empty log whose leader epoch starts
// over at the old value; the store reads the new log, not the states it
// held for the old one.
func TestStateStoreNewLogAtTheSameEpoch(t *testing.T) {
	old, fresh := &memLog{}, &memLog{}
	s := NewStateStore()
	k := Key{Group: "g", TopicID: [16]byte{9}, Partition: 0}
	if err := s.Write(0, 0, old, k, State{StateEpoch: 1, LeaderEpoch: 5, StartOffset: 10}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Read(0, 0, fresh, k); ok || err != nil {
		t.Fatalf("read from the recreated log: found %v, err %v; want nothing", ok, err)
	}
	if err := s.Write(0, 0, fresh, k, State{StateEpoch: 0, LeaderEpoch: 1, StartOffset: 0}); err != nil {
		t.Fatalf("first write to the recreated log: %v", err)
	}
	if len(fresh.batches) != 1 {
		t.Fatalf("the recreated log holds %d batches, want 1", len(fresh.batches))
	}
}
