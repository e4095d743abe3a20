package record

import (
	"fmt"
)

// Record is one decoded record of a batch. Offsets and timestamps are deltas
// from the batch's BaseOffset and FirstTimestamp.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil when the key is null
	Value          []byte // nil when the value is null
	Headers        []RecordHeader
}

// RecordHeader is one header of a record.
type RecordHeader struct {
	Key   string
	Value []byte // nil when null
}

// Records decodes every record of a whole v2 batch, decompressing it first
// (failing with ErrTooLarge beyond maxUncompressed bytes; <= 0 means
// DefaultMaxUncompressedBytes). It is for slow paths (timestamp lookup inside
// a batch, dump-log, compaction) and allocates freely; the returned records
// never alias batch.
//
// Records checks the structure it walks (length, magic, codec, record
// boundaries, RecordCount) but not the CRC nor the producer rules; call
// Validate for those. Errors wrap the same sentinels as Validate's.
func Records(batch []byte, maxUncompressed int) ([]Record, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptMessage, err)
	}
	if h.BatchLength < minBatchLength {
		return nil, fmt.Errorf("%w: batch length %d is below the minimum %d", ErrCorruptMessage, h.BatchLength, minBatchLength)
	}
	if h.Size() != int64(len(batch)) {
		if h.Size() > int64(len(batch)) {
			return nil, fmt.Errorf("%w: %w: batch needs %d bytes, only %d present", ErrCorruptMessage, ErrShortBatch, h.Size(), len(batch))
		}
		return nil, fmt.Errorf("%w: %d bytes of trailing garbage after the batch", ErrCorruptMessage, int64(len(batch))-h.Size())
	}
	if h.Magic != MagicV2 {
		return nil, fmt.Errorf("%w: magic %d, only %d is supported", ErrUnsupportedVersion, h.Magic, MagicV2)
	}
	if h.RecordCount < 0 {
		return nil, fmt.Errorf("%w: negative record count %d", ErrCorruptMessage, h.RecordCount)
	}
	if maxUncompressed <= 0 {
		maxUncompressed = DefaultMaxUncompressedBytes
	}
	// One copy (or the decompressed output) backs every key and value.
	var body []byte
	if h.Compression() == CompressionNone {
		body = append([]byte(nil), batch[HeaderSize:]...)
	} else if body, err = decompressAppend(h.Compression(), nil, batch[HeaderSize:], maxUncompressed); err != nil {
		return nil, err
	}
	// Each record takes at least 7 bytes, which bounds the allocation when
	// RecordCount lies.
	recs := make([]Record, 0, min(int(h.RecordCount), len(body)/7+1))
	for pos := 0; pos < len(body); {
		n := int32(len(recs))
		if n >= h.RecordCount {
			return nil, fmt.Errorf("%w: %d bytes remain after the %d records the header announces", ErrCorruptMessage, len(body)-pos, h.RecordCount)
		}
		length, p := readVarint(body, pos)
		if p < 0 {
			return nil, recordErr(ErrCorruptMessage, n, "malformed length varint")
		}
		if length < 1 || int(length) > len(body)-p {
			return nil, recordErr(ErrCorruptMessage, n, "length %d exceeds remaining %d bytes", length, len(body)-p)
		}
		pos = p + int(length)
		rec, err := decodeRecord(body[p:pos], n)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if int32(len(recs)) != h.RecordCount {
		return nil, fmt.Errorf("%w: header announces %d records, found %d", ErrCorruptMessage, h.RecordCount, len(recs))
	}
	return recs, nil
}

// decodeRecord decodes the body r of record n (after its length).
func decodeRecord(r []byte, n int32) (Record, error) {
	rec := Record{Attributes: int8(r[0])}
	i := 1
	if rec.TimestampDelta, i = readVarlong(r, i); i < 0 {
		return Record{}, recordErr(ErrCorruptMessage, n, "malformed timestamp delta")
	}
	if rec.OffsetDelta, i = readVarint(r, i); i < 0 {
		return Record{}, recordErr(ErrCorruptMessage, n, "malformed offset delta")
	}
	var err error
	if rec.Key, i, err = readBytes(r, i, n, "key"); err != nil {
		return Record{}, err
	}
	if rec.Value, i, err = readBytes(r, i, n, "value"); err != nil {
		return Record{}, err
	}
	count, i := readVarint(r, i)
	if i < 0 {
		return Record{}, recordErr(ErrCorruptMessage, n, "malformed header count")
	}
	if count < 0 || int(count) > (len(r)-i)/2 {
		return Record{}, recordErr(ErrCorruptMessage, n, "header count %d with %d bytes remaining", count, len(r)-i)
	}
	if count > 0 {
		rec.Headers = make([]RecordHeader, count)
	}
	for h := range rec.Headers {
		var key []byte
		if key, i, err = readBytes(r, i, n, "header key"); err != nil {
			return Record{}, err
		}
		if key == nil {
			return Record{}, recordErr(ErrCorruptMessage, n, "header %d: null key", h)
		}
		rec.Headers[h].Key = string(key)
		if rec.Headers[h].Value, i, err = readBytes(r, i, n, "header value"); err != nil {
			return Record{}, err
		}
	}
	if i != len(r) {
		return Record{}, recordErr(ErrCorruptMessage, n, "%d bytes left over after the headers", len(r)-i)
	}
	return rec, nil
}

// readBytes reads a varint-length-prefixed field of record n at r[i]; -1 is
// null and yields nil.
func readBytes(r []byte, i int, n int32, what string) ([]byte, int, error) {
	l, i := readVarint(r, i)
	if i < 0 {
		return nil, -1, recordErr(ErrCorruptMessage, n, "malformed %s length", what)
	}
	if l == -1 {
		return nil, i, nil
	}
	if l < -1 || int(l) > len(r)-i {
		return nil, -1, recordErr(ErrCorruptMessage, n, "%s length %d exceeds remaining %d bytes", what, l, len(r)-i)
	}
	return r[i : i+int(l) : i+int(l)], i + int(l), nil
}
