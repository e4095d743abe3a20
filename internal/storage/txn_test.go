package storage

import (
	"errors"
	"testing"

	"github.com/silkworm/silkworm/internal/record"
)

func txnBatch(pid int64, epoch int16, seq int32, n int) []byte {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: []byte("v")}
	}
	return record.BuildBatch(record.BuildOptions{Transactional: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, recs)
}

func markerBatch(pid int64, epoch int16, typ int16) []byte {
	return record.BuildBatch(record.BuildOptions{Transactional: true, Control: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
		[]record.Record{{Key: []byte{0, 0, 0, byte(typ)}, Value: []byte{0, 0, 0, 0, 0, 0}}})
}

func TestTransactionsTrackedAndRebuilt(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	app := func(b []byte) {
		t.Helper()
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	app(txnBatch(1, 0, 0, 2))            // 0-1: producer 1
	app(txnBatch(2, 0, 0, 1))            // 2: producer 2
	app(markerBatch(1, 0, MarkerAbort))  // 3: producer 1 aborted
	app(txnBatch(2, 0, 1, 1))            // 4
	app(markerBatch(2, 0, MarkerCommit)) // 5: producer 2 committed
	app(txnBatch(1, 0, 2, 1))            // 6: producer 1 again, open
	if _, err := l.Append(markerBatch(1, -1, MarkerAbort), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("marker with an older epoch: %v", err)
	}
	check := func(when string) {
		t.Helper()
		if o, ok := l.FirstUnstableOffset(); !ok || o != 6 {
			t.Fatalf("%s: first unstable offset %d %v, want 6", when, o, ok)
		}
		ab := l.AbortedTransactions(0, 10)
		if len(ab) != 1 || ab[0] != (AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 3}) {
			t.Fatalf("%s: aborted %+v", when, ab)
		}
		if ab := l.AbortedTransactions(4, 10); len(ab) != 0 {
			t.Fatalf("%s: aborted from 4: %+v", when, ab)
		}
	}
	check("live")
	crash(m)
	m, l = e.openLog()
	defer m.Close()
	check("after crash")
	// The producer continues after its marker with the next sequence.
	app(txnBatch(1, 0, 3, 1))
	app(markerBatch(1, 0, MarkerCommit))
	if _, ok := l.FirstUnstableOffset(); ok {
		t.Fatal("a transaction is still open after its commit marker")
	}
}
