package record

import (
	"encoding/binary"
	"fmt"
)

// BuildOptions describes the batch BuildBatch makes. The zero value is a
// plain (non-idempotent) producer's uncompressed batch at base offset 0 with
// timestamps starting at 0.
type BuildOptions struct {
	// BaseOffset and PartitionLeaderEpoch are written as given (producers send
	// base offset 0 and epoch -1; the leader overwrites both).
	BaseOffset           int64
	PartitionLeaderEpoch int32

	// Compression is the codec of the records section.
	Compression Compression

	// FirstTimestamp is the batch FirstTimestamp; record timestamps are
	// FirstTimestamp + Record.TimestampDelta. MaxTimestamp is computed.
	FirstTimestamp int64

	// ProducerID, ProducerEpoch and BaseSequence are written only when
	// Idempotent, Transactional or Control is set; otherwise the batch carries
	// -1 in all three, as a plain producer's does.
	Idempotent    bool
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32

	// Transactional and Control set the matching attribute bits.
	Transactional bool
	Control       bool

	// KeepOffsetDeltas writes each Record.OffsetDelta as given (they must
	// increase), as in a compacted log; LastOffsetDelta is then the last
	// record's. By default records are numbered 0, 1, 2... as producers do.
	KeepOffsetDeltas bool
}

// BuildBatch returns a valid v2 batch holding recs, for tests and benchmarks
// in any package. Key, Value and header values that are nil are written as
// null; Attributes and TimestampDelta are written as given; OffsetDelta is
// ignored unless opts.KeepOffsetDeltas. An empty recs gives a batch with no
// records (LastOffsetDelta -1), which Validate accepts only with
// AllowOffsetGaps. It panics on an unknown codec, since it is meant for tests.
func BuildBatch(opts BuildOptions, recs []Record) []byte {
	body := make([]byte, 0, 64*len(recs))
	lastOffsetDelta := int32(len(recs) - 1)
	maxDelta := int64(0)
	for i := range recs {
		r := &recs[i]
		if opts.KeepOffsetDeltas {
			lastOffsetDelta = r.OffsetDelta
		} else {
			lastOffsetDelta = int32(i)
		}
		if i == 0 || r.TimestampDelta > maxDelta {
			maxDelta = r.TimestampDelta
		}
		body = appendRecord(body, r, lastOffsetDelta)
	}
	if len(recs) == 0 {
		lastOffsetDelta = -1
	}
	maxTimestamp := opts.FirstTimestamp + maxDelta
	if len(recs) == 0 {
		maxTimestamp = -1
	}

	if opts.Compression < CompressionNone || opts.Compression > CompressionZstd {
		panic(fmt.Sprintf("record.BuildBatch: unknown compression %d", opts.Compression))
	}
	batch := make([]byte, HeaderSize, HeaderSize+len(body))
	batch, err := Compress(opts.Compression, batch, body)
	if err != nil {
		panic(fmt.Sprintf("record.BuildBatch: %v", err))
	}

	attrs := uint16(opts.Compression)
	if opts.Transactional {
		attrs |= AttrTransactional
	}
	if opts.Control {
		attrs |= AttrControl
	}
	producerID, producerEpoch, baseSequence := int64(-1), int16(-1), int32(-1)
	if opts.Idempotent || opts.Transactional || opts.Control {
		producerID, producerEpoch, baseSequence = opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence
	}
	be := binary.BigEndian
	be.PutUint64(batch[OffsetBaseOffset:], uint64(opts.BaseOffset))
	be.PutUint32(batch[OffsetBatchLength:], uint32(len(batch)-LogOverhead))
	be.PutUint32(batch[OffsetPartitionLeaderEpoch:], uint32(opts.PartitionLeaderEpoch))
	batch[OffsetMagic] = MagicV2
	be.PutUint16(batch[OffsetAttributes:], attrs)
	be.PutUint32(batch[OffsetLastOffsetDelta:], uint32(lastOffsetDelta))
	be.PutUint64(batch[OffsetFirstTimestamp:], uint64(opts.FirstTimestamp))
	be.PutUint64(batch[OffsetMaxTimestamp:], uint64(maxTimestamp))
	be.PutUint64(batch[OffsetProducerID:], uint64(producerID))
	be.PutUint16(batch[OffsetProducerEpoch:], uint16(producerEpoch))
	be.PutUint32(batch[OffsetBaseSequence:], uint32(baseSequence))
	be.PutUint32(batch[OffsetRecordCount:], uint32(len(recs)))
	be.PutUint32(batch[OffsetCRC:], ComputeCRC(batch))
	return batch
}

// appendRecord appends r, with the given offset delta, in the v2 record
// encoding.
func appendRecord(b []byte, r *Record, offsetDelta int32) []byte {
	// Encode the body after a reserved length slot, then move it if the
	// length varint needs more than the one byte reserved.
	start := len(b)
	b = append(b, 0)
	b = append(b, byte(r.Attributes))
	b = appendVarlong(b, r.TimestampDelta)
	b = appendVarint(b, offsetDelta)
	b = appendNullableBytes(b, r.Key)
	b = appendNullableBytes(b, r.Value)
	b = appendVarint(b, int32(len(r.Headers)))
	for _, h := range r.Headers {
		b = appendVarint(b, int32(len(h.Key)))
		b = append(b, h.Key...)
		b = appendNullableBytes(b, h.Value)
	}
	length := int32(len(b) - start - 1)
	n := varintLen(length)
	if n > 1 {
		b = append(b, make([]byte, n-1)...)
		copy(b[start+n:], b[start+1:len(b)-(n-1)])
	}
	appendVarint(b[start:start], length)
	return b
}

func appendNullableBytes(b, v []byte) []byte {
	if v == nil {
		return appendVarint(b, -1)
	}
	b = appendVarint(b, int32(len(v)))
	return append(b, v...)
}
