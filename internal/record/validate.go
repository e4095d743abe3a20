package record

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DefaultMaxUncompressedBytes is the decompression limit Validate uses when
// ValidateOptions.MaxUncompressedBytes is not set.
const DefaultMaxUncompressedBytes = 64 << 20

// minBatchLength is the smallest legal BatchLength: a header with no records.
const minBatchLength = HeaderSize - LogOverhead

// ValidateOptions says what Validate accepts. The zero value applies every
// rule Kafka enforces on a batch sent by a producer, with the default
// decompression limit.
type ValidateOptions struct {
	// MaxUncompressedBytes caps the size of the decompressed records of a
	// compressed batch; a batch that inflates beyond it fails with ErrTooLarge
	// before more memory is used. <= 0 means DefaultMaxUncompressedBytes.
	// A broker passes a few times message.max.bytes.
	MaxUncompressedBytes int

	// RequireKeys rejects records with a null key (compacted topics).
	RequireKeys bool

	// AllowControl accepts control batches (transaction markers). Only the
	// broker itself writes them; a client's produce request must not.
	AllowControl bool

	// AllowLogAppendTime accepts batches whose LogAppendTime attribute is
	// already set, as in a leader's log.
	AllowLogAppendTime bool

	// AllowOffsetGaps accepts batches as they may sit in a log after
	// compaction: offset deltas only increasing (not consecutive), records
	// fewer than LastOffsetDelta+1, even none. It also drops the check that
	// an idempotent batch has a base sequence (control batches never need
	// one). A follower appending its leader's batches sets this,
	// AllowControl and AllowLogAppendTime.
	AllowOffsetGaps bool
}

// DefaultValidateOptions is the produce-path configuration: every client rule
// and the default decompression limit.
func DefaultValidateOptions() ValidateOptions {
	return ValidateOptions{MaxUncompressedBytes: DefaultMaxUncompressedBytes}
}

// Info describes a batch that passed Validate.
type Info struct {
	// RecordCount is the number of records found (equal to the header's).
	RecordCount int32
	// LastOffsetDelta is the header's LastOffsetDelta.
	LastOffsetDelta int32
	// Compression is the batch codec.
	Compression Compression
	// FirstTimestamp is the header's FirstTimestamp.
	FirstTimestamp int64
	// MaxTimestamp is the largest record timestamp (FirstTimestamp plus the
	// largest delta), or the header's MaxTimestamp for a LogAppendTime batch,
	// or -1 for a batch without records.
	MaxTimestamp int64
	// MinTimestamp is the smallest record timestamp, for checks such as
	// message.timestamp.before.max.ms; -1 without records.
	MinTimestamp int64
	// ProducerID, ProducerEpoch and BaseSequence are the idempotence fields;
	// ProducerID is -1 for a batch from a plain producer.
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	Control       bool
	LogAppendTime bool
	// UncompressedBytes is the size of the records section after
	// decompression (equal to its stored size when uncompressed).
	UncompressedBytes int
}

// Validate checks a whole v2 batch as a Kafka broker checks a produced one:
// exact length, magic, CRC-32C, attributes, record count and offset deltas,
// and the structure of every record, decompressing it first (within
// opts.MaxUncompressedBytes) when the batch is compressed. batch must hold
// exactly one batch. It allocates nothing for an uncompressed batch and never
// keeps batch. Errors wrap ErrCorruptMessage, ErrInvalidRecord,
// ErrUnsupportedCompression, ErrUnsupportedVersion or ErrTooLarge; a batch
// cut short also matches ErrShortBatch. Records refused by a rule rather
// than malformed (keyless ones with RequireKeys) are reported together, as
// an *InvalidRecordsError, once the whole batch has been walked.
func Validate(batch []byte, opts ValidateOptions) (Info, error) {
	if len(batch) < HeaderSize {
		return Info{}, fmt.Errorf("%w: %w: %d bytes, a v2 header needs %d", ErrCorruptMessage, ErrShortBatch, len(batch), HeaderSize)
	}
	batchLength := int32(binary.BigEndian.Uint32(batch[OffsetBatchLength:]))
	if batchLength < minBatchLength {
		return Info{}, fmt.Errorf("%w: batch length %d is below the minimum %d", ErrCorruptMessage, batchLength, minBatchLength)
	}
	size := int64(batchLength) + LogOverhead
	if size > int64(len(batch)) {
		return Info{}, fmt.Errorf("%w: %w: batch length %d needs %d bytes, only %d present", ErrCorruptMessage, ErrShortBatch, batchLength, size, len(batch))
	}
	if size < int64(len(batch)) {
		return Info{}, fmt.Errorf("%w: %d bytes of trailing garbage after a batch of %d bytes", ErrCorruptMessage, int64(len(batch))-size, size)
	}
	if magic := int8(batch[OffsetMagic]); magic != MagicV2 {
		return Info{}, fmt.Errorf("%w: magic %d, only %d is supported", ErrUnsupportedVersion, magic, MagicV2)
	}
	if stored, computed := binary.BigEndian.Uint32(batch[OffsetCRC:]), ComputeCRC(batch); stored != computed {
		return Info{}, fmt.Errorf("%w: CRC mismatch: stored %#08x, computed %#08x", ErrCorruptMessage, stored, computed)
	}

	attrs := int16(binary.BigEndian.Uint16(batch[OffsetAttributes:]))
	info := Info{
		RecordCount:     int32(binary.BigEndian.Uint32(batch[OffsetRecordCount:])),
		LastOffsetDelta: int32(binary.BigEndian.Uint32(batch[OffsetLastOffsetDelta:])),
		Compression:     Compression(attrs & AttrCompressionMask),
		FirstTimestamp:  int64(binary.BigEndian.Uint64(batch[OffsetFirstTimestamp:])),
		MaxTimestamp:    -1,
		MinTimestamp:    -1,
		ProducerID:      int64(binary.BigEndian.Uint64(batch[OffsetProducerID:])),
		ProducerEpoch:   int16(binary.BigEndian.Uint16(batch[OffsetProducerEpoch:])),
		BaseSequence:    int32(binary.BigEndian.Uint32(batch[OffsetBaseSequence:])),
		Transactional:   attrs&AttrTransactional != 0,
		Control:         attrs&AttrControl != 0,
		LogAppendTime:   attrs&AttrTimestampLogAppend != 0,
	}
	if info.Compression > CompressionZstd {
		return Info{}, fmt.Errorf("%w: codec id %d", ErrUnsupportedCompression, int8(info.Compression))
	}
	if info.LogAppendTime && !opts.AllowLogAppendTime {
		return Info{}, fmt.Errorf("%w: the LogAppendTime attribute is set by the broker, not a producer", ErrInvalidRecord)
	}
	if info.Control && !opts.AllowControl {
		return Info{}, fmt.Errorf("%w: clients may not write control batches", ErrInvalidRecord)
	}
	if info.RecordCount < 0 {
		return Info{}, fmt.Errorf("%w: negative record count %d", ErrCorruptMessage, info.RecordCount)
	}
	if opts.AllowOffsetGaps {
		if info.LastOffsetDelta < info.RecordCount-1 {
			return Info{}, fmt.Errorf("%w: last offset delta %d cannot hold %d records", ErrInvalidRecord, info.LastOffsetDelta, info.RecordCount)
		}
	} else {
		if info.RecordCount == 0 {
			return Info{}, fmt.Errorf("%w: batch has no records", ErrInvalidRecord)
		}
		if info.LastOffsetDelta != info.RecordCount-1 {
			return Info{}, fmt.Errorf("%w: last offset delta %d does not match record count %d", ErrInvalidRecord, info.LastOffsetDelta, info.RecordCount)
		}
		if info.ProducerID >= 0 && info.BaseSequence < 0 && !info.Control {
			return Info{}, fmt.Errorf("%w: producer id %d with invalid base sequence %d", ErrInvalidRecord, info.ProducerID, info.BaseSequence)
		}
	}

	records := batch[HeaderSize:]
	if info.Compression == CompressionNone {
		info.UncompressedBytes = len(records)
		if err := walkRecords(records, &opts, &info); err != nil {
			return Info{}, err
		}
		info.setLogAppendTimestamps(batch)
		return info, nil
	}

	limit := opts.MaxUncompressedBytes
	if limit <= 0 {
		limit = DefaultMaxUncompressedBytes
	}
	buf := getBuffer()
	defer putBuffer(buf)
	out, err := decompressAppend(info.Compression, (*buf)[:0], records, limit)
	*buf = out[:0]
	if err != nil {
		return Info{}, err
	}
	info.UncompressedBytes = len(out)
	if err := walkRecords(out, &opts, &info); err != nil {
		return Info{}, err
	}
	info.setLogAppendTimestamps(batch)
	return info, nil
}

// setLogAppendTimestamps replaces the record timestamps by the batch's
// MaxTimestamp when the broker stamped the batch with LogAppendTime.
func (info *Info) setLogAppendTimestamps(batch []byte) {
	if info.LogAppendTime && info.RecordCount > 0 {
		ts := int64(binary.BigEndian.Uint64(batch[OffsetMaxTimestamp:]))
		info.MinTimestamp, info.MaxTimestamp = ts, ts
	}
}

// walkRecords checks the structure of the uncompressed records section b
// against info (RecordCount, LastOffsetDelta) and opts, and fills in the
// timestamps. It allocates only to report an error.
func walkRecords(b []byte, opts *ValidateOptions, info *Info) error {
	var (
		count    = info.RecordCount
		n        int32 // records found so far
		prevOff  = int32(-1)
		minDelta = int64(math.MaxInt64)
		maxDelta = int64(math.MinInt64)
		pos      int
		gaps     = opts.AllowOffsetGaps
		keys     = opts.RequireKeys
		lastOff  = info.LastOffsetDelta
		nullKeys []int32 // batch indexes of keyless records, with RequireKeys
	)
	for pos < len(b) {
		if n >= count {
			return fmt.Errorf("%w: %d bytes remain after the %d records the header announces", ErrCorruptMessage, len(b)-pos, count)
		}
		// Each field tries the inlined one- or two-byte decoder first.
		length, p := varintFast(b, pos)
		if p < 0 {
			length, p = readVarintSlow(b, pos)
		}
		if p < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed length varint")
		}
		if length < 1 || int(length) > len(b)-p {
			return recordErr(ErrCorruptMessage, n, "length %d exceeds remaining %d bytes", length, len(b)-p)
		}
		pos = p + int(length)
		r := b[p:pos]

		// r[0] is the attributes byte, unused by Kafka.
		tsDelta, i := varlongFast(r, 1)
		if i < 0 {
			tsDelta, i = readVarlongSlow(r, 1)
		}
		if i < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed timestamp delta")
		}
		minDelta = min(minDelta, tsDelta)
		maxDelta = max(maxDelta, tsDelta)

		offDelta, j := varintFast(r, i)
		if j < 0 {
			offDelta, j = readVarintSlow(r, i)
		}
		if i = j; i < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed offset delta")
		}
		if gaps {
			if offDelta <= prevOff || offDelta > lastOff {
				return recordErr(ErrInvalidRecord, n, "offset delta %d out of order (previous %d, last %d)", offDelta, prevOff, lastOff)
			}
			prevOff = offDelta
		} else if offDelta != n {
			return recordErr(ErrInvalidRecord, n, "offset delta %d, producers must number records consecutively from 0", offDelta)
		}

		keyLen, j := varintFast(r, i)
		if j < 0 {
			keyLen, j = readVarintSlow(r, i)
		}
		if i = j; i < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed key length")
		}
		if keyLen < 0 {
			if keyLen != -1 {
				return recordErr(ErrCorruptMessage, n, "key length %d", keyLen)
			}
			if keys {
				// Kafka names every keyless record (KIP-467), so the
				// walk goes on; structural corruption found later
				// still wins.
				nullKeys = append(nullKeys, n)
			}
		} else {
			if int(keyLen) > len(r)-i {
				return recordErr(ErrCorruptMessage, n, "key length %d exceeds remaining %d bytes", keyLen, len(r)-i)
			}
			i += int(keyLen)
		}

		valueLen, j := varintFast(r, i)
		if j < 0 {
			valueLen, j = readVarintSlow(r, i)
		}
		if i = j; i < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed value length")
		}
		if valueLen < -1 || int(valueLen) > len(r)-i {
			return recordErr(ErrCorruptMessage, n, "value length %d exceeds remaining %d bytes", valueLen, len(r)-i)
		}
		if valueLen > 0 {
			i += int(valueLen)
		}

		headers, j := varintFast(r, i)
		if j < 0 {
			headers, j = readVarintSlow(r, i)
		}
		if i = j; i < 0 {
			return recordErr(ErrCorruptMessage, n, "malformed header count")
		}
		if headers < 0 {
			return recordErr(ErrCorruptMessage, n, "header count %d", headers)
		}
		for h := range headers {
			var kl, vl int32
			kl, i = readVarint(r, i)
			if i < 0 {
				return recordErr(ErrCorruptMessage, n, "header %d: malformed key length", h)
			}
			if kl < 0 || int(kl) > len(r)-i {
				return recordErr(ErrCorruptMessage, n, "header %d: key length %d exceeds remaining %d bytes", h, kl, len(r)-i)
			}
			i += int(kl)
			vl, i = readVarint(r, i)
			if i < 0 {
				return recordErr(ErrCorruptMessage, n, "header %d: malformed value length", h)
			}
			if vl < -1 || int(vl) > len(r)-i {
				return recordErr(ErrCorruptMessage, n, "header %d: value length %d exceeds remaining %d bytes", h, vl, len(r)-i)
			}
			if vl > 0 {
				i += int(vl)
			}
		}
		if i != len(r) {
			return recordErr(ErrCorruptMessage, n, "%d bytes left over after the headers", len(r)-i)
		}
		n++
	}
	if n != count {
		return fmt.Errorf("%w: header announces %d records, found %d", ErrCorruptMessage, count, n)
	}
	if nullKeys != nil {
		return &InvalidRecordsError{NullKeys: nullKeys}
	}
	if n > 0 {
		info.MinTimestamp = info.FirstTimestamp + minDelta
		info.MaxTimestamp = info.FirstTimestamp + maxDelta
	}
	return nil
}

// InvalidRecordsError is Validate's error for a well-formed batch some of
// whose records a rule refuses: with RequireKeys, the records without a key.
// It names each by its index in the batch (counted from 0), so that a
// broker can answer Produce v8+ with one record error per record (KIP-467),
// as Kafka's LogValidator does. It unwraps to ErrInvalidRecord.
type InvalidRecordsError struct {
	// NullKeys are the batch indexes of the records with a null key, in
	// batch order.
	NullKeys []int32
}

func (e *InvalidRecordsError) Error() string {
	return fmt.Sprintf("%s: %d record(s) with a null key in a compacted topic, first at batch index %d",
		ErrInvalidRecord, len(e.NullKeys), e.NullKeys[0])
}

// Unwrap returns ErrInvalidRecord.
func (e *InvalidRecordsError) Unwrap() error { return ErrInvalidRecord }

func recordErr(sentinel error, n int32, format string, args ...any) error {
	return fmt.Errorf("%w: record %d: %s", sentinel, n, fmt.Sprintf(format, args...))
}

// SetLogAppendTime marks batch as using LogAppendTime with ts as its
// MaxTimestamp, and recomputes the CRC, as a broker does on append for a topic
// with message.timestamp.type=LogAppendTime. batch must be a whole batch that
// passed Validate. FirstTimestamp and the record deltas are left as they are;
// readers use MaxTimestamp for every record of such a batch.
func SetLogAppendTime(batch []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(batch[OffsetAttributes:])
	binary.BigEndian.PutUint16(batch[OffsetAttributes:], attrs|AttrTimestampLogAppend)
	binary.BigEndian.PutUint64(batch[OffsetMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(batch[OffsetCRC:], ComputeCRC(batch))
}
