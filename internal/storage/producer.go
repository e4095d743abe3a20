package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"sort"

	"github.com/silkworm/silkworm/internal/record"
)

// producerBatchesKept is how many recent batches per producer are kept for
// duplicate detection (Kafka: max.in.flight.requests.per.connection <= 5).
const producerBatchesKept = 5

type producerBatch struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
	maxTimestamp            int64
}

type producerEntry struct {
	epoch         int16
	batches       []producerBatch // oldest first, at most producerBatchesKept
	lastTimestamp int64
}

func (e *producerEntry) lastSeq() int32 {
	if len(e.batches) == 0 {
		return -1
	}
	return e.batches[len(e.batches)-1].lastSeq
}

// producerState is Kafka's ProducerStateManager reduced to idempotence:
// per producer id, the epoch and the last five batches. Not safe for
// concurrent use; the Log guards it with its mu.
type producerState struct {
	producers map[int64]*producerEntry
}

func newProducerState() *producerState {
	return &producerState{producers: map[int64]*producerEntry{}}
}

// check validates a leader append. It returns the original batch when h is a
// duplicate of one of the producer's recent batches.
//
// Rules: an older epoch is fenced (ErrInvalidProducerEpoch); a newer epoch,
// or a producer id we hold no state for, must start at sequence 0
// (ErrOutOfOrderSequence otherwise; we never answer UnknownProducerId); in
// the current epoch the first sequence must follow the last one.
func (ps *producerState) check(h *record.Header) (dup *producerBatch, err error) {
	e := ps.producers[h.ProducerID]
	if e == nil {
		// Like Kafka 2.5+ (KIP-360): a producer whose state is gone (its
		// batches were deleted by retention) may continue at any sequence.
		return nil, nil
	}
	if h.ProducerEpoch < e.epoch {
		return nil, fmt.Errorf("producer %d: epoch %d is older than %d: %w", h.ProducerID, h.ProducerEpoch, e.epoch, ErrInvalidProducerEpoch)
	}
	if h.IsControl() || h.BaseSequence < 0 {
		// A transaction marker, or a group coordinator's transactional
		// offset commit: written by a coordinator, without sequence.
		return nil, nil
	}
	if h.ProducerEpoch > e.epoch {
		if h.BaseSequence != 0 {
			return nil, fmt.Errorf("producer %d: new epoch %d starts at sequence %d, not 0: %w", h.ProducerID, h.ProducerEpoch, h.BaseSequence, ErrOutOfOrderSequence)
		}
		return nil, nil
	}
	last := h.LastSequence()
	for i := range e.batches {
		if b := &e.batches[i]; b.firstSeq == h.BaseSequence && b.lastSeq == last {
			return b, nil
		}
	}
	if !inSequence(e.lastSeq(), h.BaseSequence) {
		return nil, fmt.Errorf("producer %d epoch %d: sequence %d does not follow %d: %w", h.ProducerID, h.ProducerEpoch, h.BaseSequence, e.lastSeq(), ErrOutOfOrderSequence)
	}
	return nil, nil
}

func inSequence(last, next int32) bool {
	return next == last+1 || (last == math.MaxInt32 && next == 0)
}

// update records an appended batch (leader, follower or recovery replay).
func (ps *producerState) update(h *record.Header, baseOffset int64) {
	if h.ProducerID < 0 {
		return
	}
	e := ps.producers[h.ProducerID]
	if e == nil {
		e = &producerEntry{epoch: h.ProducerEpoch}
		ps.producers[h.ProducerID] = e
	}
	if h.ProducerEpoch != e.epoch {
		e.epoch = h.ProducerEpoch
		e.batches = e.batches[:0]
	}
	if h.IsControl() || h.BaseSequence < 0 {
		// Markers take no sequence numbers: the producer's next batch
		// follows its last data batch (or starts at 0 in a new epoch).
		return
	}
	if len(e.batches) == producerBatchesKept {
		copy(e.batches, e.batches[1:])
		e.batches = e.batches[:producerBatchesKept-1]
	}
	e.batches = append(e.batches, producerBatch{
		firstSeq: h.BaseSequence, lastSeq: h.LastSequence(),
		firstOffset: baseOffset, lastOffset: baseOffset + int64(h.LastOffsetDelta),
		maxTimestamp: h.MaxTimestamp,
	})
	e.lastTimestamp = h.MaxTimestamp
}

// Snapshot file format (all integers big-endian):
//
//	magic   "SWPS" (4 bytes)
//	version uint16 = 1
//	crc     uint32, CRC-32C of everything after this field
//	count   uint32, number of producers
//	count × { producerID int64, epoch int16, lastTimestamp int64,
//	          nbatches uint8, nbatches × { firstSeq int32, lastSeq int32,
//	          firstOffset int64, lastOffset int64, maxTimestamp int64 } }
//
// Version 2 appends the log's transaction state (txn.go), so that an open
// replays only the batches after the snapshot instead of the whole log:
//
//	nOngoing uint32, nOngoing × { producerID int64, firstOffset int64 }
//	nAborted uint32, nAborted × { producerID int64, firstOffset int64, lastOffset int64 }
//	nEpochs  uint32, nEpochs  × { producerID int64, coordinatorEpoch int32 }
//
// A version 1 snapshot (no transaction state) makes the open rebuild the
// transaction state from every batch header.
const (
	snapshotMagic     = "SWPS"
	snapshotVersion   = 1
	snapshotVersionTx = 2
	snapshotHeader    = 4 + 2 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (ps *producerState) encode() []byte { return ps.encodeWith(nil) }

// encodeWith encodes a version 2 snapshot with ts, or version 1 when ts
// is nil.
func (ps *producerState) encodeWith(ts *txnState) []byte {
	ids := make([]int64, 0, len(ps.producers))
	for id := range ps.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b := make([]byte, snapshotHeader, snapshotHeader+4+len(ids)*(19+producerBatchesKept*32))
	copy(b, snapshotMagic)
	binary.BigEndian.PutUint16(b[4:], snapshotVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		e := ps.producers[id]
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastTimestamp))
		b = append(b, byte(len(e.batches)))
		for _, pb := range e.batches {
			b = binary.BigEndian.AppendUint32(b, uint32(pb.firstSeq))
			b = binary.BigEndian.AppendUint32(b, uint32(pb.lastSeq))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.firstOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.lastOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.maxTimestamp))
		}
	}
	if ts != nil {
		binary.BigEndian.PutUint16(b[4:], snapshotVersionTx)
		b = ts.appendTo(b)
	}
	binary.BigEndian.PutUint32(b[6:], crc32.Checksum(b[snapshotHeader:], castagnoli))
	return b
}

func (ts *txnState) appendTo(b []byte) []byte {
	be := binary.BigEndian
	ids := make([]int64, 0, len(ts.ongoing))
	for id := range ts.ongoing {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b = be.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint64(b, uint64(ts.ongoing[id]))
	}
	b = be.AppendUint32(b, uint32(len(ts.aborted)))
	for _, a := range ts.aborted {
		b = be.AppendUint64(b, uint64(a.ProducerID))
		b = be.AppendUint64(b, uint64(a.FirstOffset))
		b = be.AppendUint64(b, uint64(a.LastOffset))
	}
	ids = ids[:0]
	for id := range ts.coordinatorEpochs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b = be.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint32(b, uint32(ts.coordinatorEpochs[id]))
	}
	return b
}

func decodeTxnState(p []byte) (*txnState, error) {
	be := binary.BigEndian
	short := fmt.Errorf("producer snapshot transaction state truncated: %w", ErrCorrupt)
	ts := newTxnState()
	count := func(each int) (int, error) {
		if len(p) < 4 {
			return 0, short
		}
		n := int(be.Uint32(p))
		p = p[4:]
		if n < 0 || len(p)/each < n {
			return 0, short
		}
		return n, nil
	}
	n, err := count(16)
	if err != nil {
		return nil, err
	}
	for range n {
		ts.ongoing[int64(be.Uint64(p))] = int64(be.Uint64(p[8:]))
		p = p[16:]
	}
	if n, err = count(24); err != nil {
		return nil, err
	}
	for range n {
		ts.aborted = append(ts.aborted, AbortedTxn{ProducerID: int64(be.Uint64(p)),
			FirstOffset: int64(be.Uint64(p[8:])), LastOffset: int64(be.Uint64(p[16:]))})
		p = p[24:]
	}
	if n, err = count(12); err != nil {
		return nil, err
	}
	for range n {
		ts.coordinatorEpochs[int64(be.Uint64(p))] = int32(be.Uint32(p[8:]))
		p = p[12:]
	}
	return ts, nil
}

func decodeProducerSnapshot(b []byte) (*producerState, error) {
	ps, _, err := decodeSnapshot(b)
	return ps, err
}

// decodeSnapshot decodes a producer snapshot; ts is nil for version 1.
func decodeSnapshot(b []byte) (*producerState, *txnState, error) {
	if len(b) < snapshotHeader+4 || string(b[:4]) != snapshotMagic {
		return nil, nil, fmt.Errorf("not a producer snapshot: %w", ErrCorrupt)
	}
	v := binary.BigEndian.Uint16(b[4:])
	if v != snapshotVersion && v != snapshotVersionTx {
		return nil, nil, fmt.Errorf("producer snapshot version %d: %w", v, ErrCorrupt)
	}
	if crc := binary.BigEndian.Uint32(b[6:]); crc != crc32.Checksum(b[snapshotHeader:], castagnoli) {
		return nil, nil, fmt.Errorf("producer snapshot CRC mismatch: %w", ErrCorrupt)
	}
	ps, p, err := decodeProducers(b)
	if err != nil || v == snapshotVersion {
		return ps, nil, err
	}
	ts, err := decodeTxnState(p)
	if err != nil {
		return nil, nil, err
	}
	return ps, ts, nil
}

// decodeProducers decodes the producer entries and returns what follows.
func decodeProducers(b []byte) (*producerState, []byte, error) {
	p := b[snapshotHeader:]
	n := binary.BigEndian.Uint32(p)
	p = p[4:]
	ps := newProducerState()
	short := fmt.Errorf("producer snapshot truncated: %w", ErrCorrupt)
	for range n {
		if len(p) < 19 {
			return nil, nil, short
		}
		id := int64(binary.BigEndian.Uint64(p))
		e := &producerEntry{epoch: int16(binary.BigEndian.Uint16(p[8:])), lastTimestamp: int64(binary.BigEndian.Uint64(p[10:]))}
		nb := int(p[18])
		p = p[19:]
		if nb > producerBatchesKept || len(p) < nb*32 {
			return nil, nil, short
		}
		for range nb {
			e.batches = append(e.batches, producerBatch{
				firstSeq:     int32(binary.BigEndian.Uint32(p)),
				lastSeq:      int32(binary.BigEndian.Uint32(p[4:])),
				firstOffset:  int64(binary.BigEndian.Uint64(p[8:])),
				lastOffset:   int64(binary.BigEndian.Uint64(p[16:])),
				maxTimestamp: int64(binary.BigEndian.Uint64(p[24:])),
			})
			p = p[32:]
		}
		ps.producers[id] = e
	}
	return ps, p, nil
}

// ProducerInfo is one producer of a partition as DescribeProducers
// reports it (Kafka's ProducerStateEntry, seen from outside).
type ProducerInfo struct {
	ProducerID    int64
	ProducerEpoch int16
	// LastSequence is the last sequence number appended, -1 when the
	// producer's current epoch has no data batch yet.
	LastSequence int32
	// LastTimestamp is the max timestamp of its last data batch, -1 when
	// none.
	LastTimestamp int64
	// CoordinatorEpoch is the coordinator epoch of its last transaction
	// marker, -1 when none was written.
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is the first offset of its ongoing
	// transaction in this partition, -1 when none is open.
	CurrentTxnStartOffset int64
}

// Producers lists the producers this log holds state for, by producer id.
// Safe for concurrent use with appends.
func (l *Log) Producers() []ProducerInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.txnMu.RLock()
	defer l.txnMu.RUnlock()
	out := make([]ProducerInfo, 0, len(l.producers.producers))
	for id, e := range l.producers.producers {
		pi := ProducerInfo{ProducerID: id, ProducerEpoch: e.epoch, LastSequence: e.lastSeq(),
			LastTimestamp: -1, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}
		if len(e.batches) > 0 || e.lastTimestamp != 0 {
			pi.LastTimestamp = e.lastTimestamp
		}
		if l.txns != nil {
			if ce, ok := l.txns.coordinatorEpochs[id]; ok {
				pi.CoordinatorEpoch = ce
			}
			if first, ok := l.txns.ongoing[id]; ok {
				pi.CurrentTxnStartOffset = first
			}
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// OngoingTxnStart returns the first offset of producerID's ongoing
// transaction in this log, and false when it has none open here (a
// transactional batch would then start one: the broker verifies it with
// the transaction coordinator first, KIP-890).
func (l *Log) OngoingTxnStart(producerID int64) (int64, bool) {
	l.txnMu.RLock()
	defer l.txnMu.RUnlock()
	if l.txns == nil {
		return -1, false
	}
	first, ok := l.txns.ongoing[producerID]
	return first, ok
}

// CoordinatorEpoch is the coordinator epoch of producerID's last
// transaction marker in this log, and false when it has none. A marker
// from an older coordinator epoch comes from a coordinator that lost its
// partition (TRANSACTION_COORDINATOR_FENCED).
func (l *Log) CoordinatorEpoch(producerID int64) (int32, bool) {
	l.txnMu.RLock()
	defer l.txnMu.RUnlock()
	if l.txns == nil {
		return -1, false
	}
	e, ok := l.txns.coordinatorEpochs[producerID]
	return e, ok
}
