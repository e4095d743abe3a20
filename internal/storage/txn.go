package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/silkworm/silkworm/internal/record"
)

// Transaction markers: the type in a control record's key (KIP-98).
const (
	// MarkerAbort is the ABORT control record type.
	MarkerAbort int16 = 0
	// MarkerCommit is the COMMIT control record type.
	MarkerCommit int16 = 1
)

// AbortedTxn is one aborted transaction of a partition, as a
// read_committed fetch reports it: the producer, the offset of its first
// batch in this partition and the offset of its ABORT marker.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64 // offset of the ABORT marker
}

// txnState is Kafka's ongoing-transaction tracking and aborted-transaction
// index of one log, kept in memory: per producer id the first offset of
// its ongoing transaction, and every aborted transaction in marker order.
// It is saved in every producer snapshot (producer.go) and rebuilt at open
// (and after a truncation) from the newest snapshot plus a scan of the
// batch headers after it, reading only control batches whole (every
// header of the log when the snapshot is of version 1); there is no
// .txnindex file. Guarded by Log.txnMu (taken after Log.mu); firstUnstable
// is readable without it.
type txnState struct {
	ongoing map[int64]int64 // producer id -> first offset of its open transaction
	aborted []AbortedTxn    // ascending LastOffset
	// coordinatorEpochs is, per producer id, the coordinator epoch of its
	// last marker (DescribeProducers' LatestCoordinatorEpoch).
	coordinatorEpochs map[int64]int32
}

func newTxnState() *txnState {
	return &txnState{ongoing: map[int64]int64{}, coordinatorEpochs: map[int64]int32{}}
}

// update applies one appended batch. marker is the control record type
// for a control batch (-1 when it could not be read or for data).
func (ts *txnState) update(h *record.Header, marker int16) {
	if !h.IsTransactional() || h.ProducerID < 0 {
		return
	}
	if !h.IsControl() {
		if _, ok := ts.ongoing[h.ProducerID]; !ok {
			ts.ongoing[h.ProducerID] = h.BaseOffset
		}
		return
	}
	first, ok := ts.ongoing[h.ProducerID]
	delete(ts.ongoing, h.ProducerID)
	if ok && marker == MarkerAbort {
		ts.aborted = append(ts.aborted, AbortedTxn{ProducerID: h.ProducerID, FirstOffset: first, LastOffset: h.BaseOffset})
	}
}

// firstUnstable is the smallest first offset of an ongoing transaction,
// math.MaxInt64 when there is none.
func (ts *txnState) firstUnstable() int64 {
	first := int64(math.MaxInt64)
	for _, o := range ts.ongoing {
		first = min(first, o)
	}
	return first
}

// MarkerType reads the control record type (MarkerAbort or MarkerCommit)
// of a control batch.
func MarkerType(batch []byte) (int16, error) {
	recs, err := record.Records(batch, 1<<20)
	if err != nil {
		return -1, err
	}
	if len(recs) == 0 || len(recs[0].Key) < 4 {
		return -1, fmt.Errorf("control batch without a control record key: %w", ErrCorrupt)
	}
	return int16(binary.BigEndian.Uint16(recs[0].Key[2:])), nil
}

// markerCoordinatorEpoch reads the coordinator epoch from a control
// batch's marker value (version int16, coordinator epoch int32).
func markerCoordinatorEpoch(batch []byte) (int32, bool) {
	recs, err := record.Records(batch, 1<<20)
	if err != nil || len(recs) == 0 || len(recs[0].Value) < 6 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(recs[0].Value[2:])), true
}

// updateTxnLocked applies an appended batch to the transaction state.
func (l *Log) updateTxnLocked(h *record.Header, batch []byte) {
	if !h.IsTransactional() || h.ProducerID < 0 {
		return
	}
	marker := int16(-1)
	coordEpoch, haveEpoch := int32(0), false
	if h.IsControl() {
		var err error
		if marker, err = MarkerType(batch); err != nil {
			l.logger.Warn("unreadable transaction marker", "offset", h.BaseOffset, "err", err)
		}
		coordEpoch, haveEpoch = markerCoordinatorEpoch(batch)
	}
	l.txnMu.Lock()
	l.txns.update(h, marker)
	if haveEpoch {
		l.txns.coordinatorEpochs[h.ProducerID] = coordEpoch
	}
	l.firstUnstable.Store(l.txns.firstUnstable())
	l.txnMu.Unlock()
}

// loadTxnStateLocked rebuilds the transaction state: ts (the state of a
// producer snapshot at offset from, or empty with from = MinInt64) plus
// every batch whose last offset is at or past from. Data batches cost a
// header read; control batches are read whole to learn COMMIT or ABORT.
func (l *Log) loadTxnStateLocked(ts *txnState, from int64) error {
	hb := make([]byte, batchPrefix)
	segs := *l.segs.Load()
	for i, s := range segs {
		size := s.size.Load()
		if endBoundLocked(segs, i) <= from || size == 0 {
			continue
		}
		pos := int64(0)
		if from > s.base {
			pos = s.index.lookup(s.relOffset(from))
		}
		for pos < size {
			b, err := s.readBounds(pos, size, hb)
			if err != nil {
				return fmt.Errorf("load transactions of %s: %w", l.tp, err)
			}
			if b.lastOffset < from {
				pos += b.size
				continue
			}
			h, err := record.ParseHeader(hb)
			if err != nil {
				return fmt.Errorf("load transactions of %s: %s at %d: %w", l.tp, s.log.Name(), pos, err)
			}
			if h.IsTransactional() && h.ProducerID >= 0 {
				marker := int16(-1)
				if h.IsControl() {
					batch := make([]byte, b.size)
					if _, err := s.log.ReadAt(batch, pos); err != nil {
						return fmt.Errorf("load transactions of %s: read %s at %d: %w", l.tp, s.log.Name(), pos, err)
					}
					if marker, err = MarkerType(batch); err != nil {
						l.logger.Warn("unreadable transaction marker", "offset", h.BaseOffset, "err", err)
					}
					if e, ok := markerCoordinatorEpoch(batch); ok {
						ts.coordinatorEpochs[h.ProducerID] = e
					}
				}
				ts.update(&h, marker)
			}
			pos += b.size
		}
	}
	l.txnMu.Lock()
	l.txns = ts
	l.firstUnstable.Store(ts.firstUnstable())
	l.txnMu.Unlock()
	return nil
}

// FirstUnstableOffset is the first offset of the oldest ongoing
// transaction in the log, and false when no transaction is open. The last
// stable offset is the smaller of it and the high watermark.
func (l *Log) FirstUnstableOffset() (int64, bool) {
	o := l.firstUnstable.Load()
	return o, o != math.MaxInt64
}

// AbortedTransactions lists the aborted transactions that overlap the
// offsets [from, upTo): whose ABORT marker is at or after from and whose
// first offset is below upTo. A read_committed consumer drops their
// records from what it fetched.
func (l *Log) AbortedTransactions(from, upTo int64) []AbortedTxn {
	l.txnMu.RLock()
	defer l.txnMu.RUnlock()
	if l.txns == nil {
		return nil
	}
	i := sort.Search(len(l.txns.aborted), func(i int) bool { return l.txns.aborted[i].LastOffset >= from })
	var out []AbortedTxn
	for _, a := range l.txns.aborted[i:] {
		if a.FirstOffset < upTo {
			out = append(out, a)
		}
	}
	return out
}
