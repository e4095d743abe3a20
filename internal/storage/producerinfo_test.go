package storage

import (
	"testing"

	"github.com/silkworm/silkworm/internal/record"
)

// coordinatorMarker is a marker written by a coordinator of epoch ce.
func coordinatorMarker(pid int64, epoch int16, typ int16, ce int32) []byte {
	return record.BuildBatch(record.BuildOptions{Transactional: true, Control: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
		[]record.Record{{Key: []byte{0, 0, 0, byte(typ)}, Value: []byte{0, 0, byte(ce >> 24), byte(ce >> 16), byte(ce >> 8), byte(ce)}}})
}

// Producers reports what DescribeProducers shows, live and after the
// state is rebuilt from the log.
func TestProducersDescribed(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	app := func(b []byte) {
		t.Helper()
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	app(txnBatch(7, 0, 0, 3))                     // 0-2: producer 7, open
	app(coordinatorMarker(7, 1, MarkerCommit, 4)) // 3: committed with a bumped epoch (KIP-890)
	app(txnBatch(9, 2, 0, 1))                     // 4: producer 9, open
	check := func(when string) {
		t.Helper()
		ps := l.Producers()
		if len(ps) != 2 {
			t.Fatalf("%s: %+v", when, ps)
		}
		if p := ps[0]; p.ProducerID != 7 || p.ProducerEpoch != 1 || p.LastSequence != -1 || p.CoordinatorEpoch != 4 || p.CurrentTxnStartOffset != -1 {
			t.Fatalf("%s: producer 7 %+v", when, p)
		}
		if p := ps[1]; p.ProducerID != 9 || p.ProducerEpoch != 2 || p.LastSequence != 0 || p.CoordinatorEpoch != -1 || p.CurrentTxnStartOffset != 4 {
			t.Fatalf("%s: producer 9 %+v", when, p)
		}
		if o, ok := l.OngoingTxnStart(9); !ok || o != 4 {
			t.Fatalf("%s: ongoing of 9: %d %v", when, o, ok)
		}
		if _, ok := l.OngoingTxnStart(7); ok {
			t.Fatalf("%s: 7 has no transaction open", when)
		}
		if ce, ok := l.CoordinatorEpoch(7); !ok || ce != 4 {
			t.Fatalf("%s: coordinator epoch of 7: %d %v", when, ce, ok)
		}
	}
	check("live")
	crash(m)
	m, l = e.openLog()
	defer m.Close()
	check("after crash")
}
