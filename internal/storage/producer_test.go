package storage

import (
	"errors"
	"testing"
)

func appendP(l *Log, pid int64, epoch int16, seq int32, records int) (AppendResult, error) {
	return l.Append(makeBatch(batchSpec{records: records, pid: pid, epoch: epoch, seq: seq, valueSize: 20}), AppendOptions{AssignOffsets: true})
}

func mustAppendP(t *testing.T, l *Log, pid int64, epoch int16, seq int32, records int) AppendResult {
	t.Helper()
	res, err := appendP(l, pid, epoch, seq, records)
	if err != nil {
		t.Fatalf("append pid %d epoch %d seq %d: %v", pid, epoch, seq, err)
	}
	return res
}

func TestIdempotentProducer(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	defer m.Close()
	r0 := mustAppendP(t, l, 7, 0, 0, 3)
	r1 := mustAppendP(t, l, 7, 0, 3, 2)
	if r0.BaseOffset != 0 || r1.BaseOffset != 3 || r1.LastOffset != 4 {
		t.Fatalf("offsets %+v %+v", r0, r1)
	}
	dup := mustAppendP(t, l, 7, 0, 0, 3)
	if !dup.Duplicate || dup.BaseOffset != 0 || dup.LastOffset != 2 || l.LogEndOffset() != 5 {
		t.Fatalf("duplicate: %+v, LEO %d", dup, l.LogEndOffset())
	}
	if _, err := appendP(l, 7, 0, 10, 1); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("gap: %v", err)
	}
	// Kafka 2.5+: a producer without state (e.g. expired by retention)
	// may continue at any sequence; the next batch must then follow it.
	if _, err := appendP(l, 8, 0, 5, 1); err != nil {
		t.Fatalf("unknown producer at seq 5: %v", err)
	}
	if _, err := appendP(l, 8, 0, 7, 1); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("gap after an unknown producer's first batch: %v", err)
	}
	if _, err := appendP(l, 7, 1, 5, 1); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("epoch bump not at seq 0: %v", err)
	}
	mustAppendP(t, l, 7, 1, 0, 1) // epoch bump
	if _, err := appendP(l, 7, 0, 5, 1); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("fenced epoch: %v", err)
	}
	// Only the last five batches are remembered.
	for i := int32(1); i <= 6; i++ {
		mustAppendP(t, l, 7, 1, i, 1)
	}
	if _, err := appendP(l, 7, 1, 1, 1); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("old sequence beyond the five cached batches: %v", err)
	}
	if d := mustAppendP(t, l, 7, 1, 2, 1); !d.Duplicate {
		t.Fatalf("cached batch not reported as duplicate: %+v", d)
	}
}

func TestProducerStateSurvivesRestart(t *testing.T) {
	for _, mode := range []string{"close", "crash"} {
		for _, cname := range []string{"default", "tinySegments"} {
			t.Run(mode+"/"+cname, func(t *testing.T) {
				e := newEnv(t, configMatrix()[cname])
				m, l := e.openLog()
				var last AppendResult
				seq := int32(0)
				for i := 0; i < 40; i++ {
					last = mustAppendP(t, l, 42, 3, seq, 2)
					seq += 2
					mustAppendP(t, l, 43, 0, int32(i), 1)
				}
				if mode == "close" {
					if err := m.Close(); err != nil {
						t.Fatal(err)
					}
				} else {
					crash(m)
				}
				m2 := e.open()
				defer m2.Close()
				l2 := m2.Get("t", 0)
				dup := mustAppendP(t, l2, 42, 3, seq-2, 2)
				if !dup.Duplicate || dup.BaseOffset != last.BaseOffset {
					t.Fatalf("after %s: retry not detected: %+v, want base %d", mode, dup, last.BaseOffset)
				}
				if _, err := appendP(l2, 42, 3, seq+1, 1); !errors.Is(err, ErrOutOfOrderSequence) {
					t.Fatalf("gap after %s: %v", mode, err)
				}
				if _, err := appendP(l2, 42, 2, 0, 1); !errors.Is(err, ErrInvalidProducerEpoch) {
					t.Fatalf("fenced epoch after %s: %v", mode, err)
				}
				mustAppendP(t, l2, 42, 3, seq, 1)
			})
		}
	}
}

func TestProducerSnapshotRoundTrip(t *testing.T) {
	ps := newProducerState()
	for i := 0; i < 8; i++ {
		h := makeHeader(t, batchSpec{records: 2, pid: 5, epoch: 1, seq: int32(i * 2)})
		ps.update(&h, int64(i*2))
	}
	h := makeHeader(t, batchSpec{records: 1, pid: 9, epoch: 0, seq: 0})
	ps.update(&h, 100)
	b := ps.encode()
	got, err := decodeProducerSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.producers) != 2 || len(got.producers[5].batches) != producerBatchesKept || got.producers[5].lastSeq() != 15 {
		t.Fatalf("decoded %+v", got.producers[5])
	}
	b[len(b)-1] ^= 1
	if _, err := decodeProducerSnapshot(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt snapshot: %v", err)
	}
}
