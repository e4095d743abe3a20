package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/klauspost/compress/snappy"
)

// Down-conversion: stored v2 batches to legacy message sets (magic 0 or 1)
// for fetches of old versions (Fetch v0-v3), as Kafka's RecordsUtil.downConvert:
//
//   - each record becomes one legacy message at its absolute offset; headers
//     are dropped (the legacy formats have none); magic 0 carries no
//     timestamp, magic 1 the record's timestamp, or the batch's
//     MaxTimestamp with the LogAppendTime bit when the batch is
//     LogAppendTime;
//   - a compressed batch becomes one wrapper message holding its records
//     compressed with the same codec (inner offsets absolute for magic 0,
//     relative to the first inner record for magic 1; the wrapper carries
//     the last inner offset). Snappy is written in xerial framing and lz4
//     in the frame format with, for magic 0, the header checksum Kafka's
//     magic 0 writers compute over the frame magic too;
//   - control batches are dropped, idempotent and transactional batches
//     become plain messages (the producer fields are lost);
//   - zstd cannot be expressed in the legacy formats: conversion stops
//     there, and fails with ErrUnsupportedCompression when the first batch
//     to convert is zstd (Kafka answers UNSUPPORTED_COMPRESSION_TYPE).

// ErrDownConvertZstd is wrapped by DownConvert's error when the first batch
// it would convert is zstd-compressed. It wraps ErrUnsupportedCompression.
var ErrDownConvertZstd = fmt.Errorf("%w: zstd batches cannot be down-converted to magic 0 or 1", ErrUnsupportedCompression)

// DownConvertOptions says what DownConvert produces.
type DownConvertOptions struct {
	// Magic is the legacy format to write: MagicV0 or MagicV1.
	Magic int8
	// FirstOffset drops records below it (the fetch offset: a batch read
	// from the middle starts before it).
	FirstOffset int64
	// MaxBytes stops the conversion before the message (uncompressed
	// batches) or wrapper (compressed ones) that would take the output past
	// MaxBytes bytes. The first unit is always written whole, however
	// large; 0 means no limit.
	MaxBytes int
	// MaxUncompressed caps the decompressed size of one batch; <= 0 means
	// DefaultMaxUncompressedBytes.
	MaxUncompressed int
	// Skip, when set, is asked about every data batch before it is
	// converted; true drops the batch (the fetch path drops aborted
	// transactional batches).
	Skip func(h *Header) bool
}

// DownConvertResult says what DownConvert did.
type DownConvertResult struct {
	// Messages is the number of legacy messages written, inner messages of
	// wrappers included.
	Messages int
	// NextOffset is the offset after the last record converted or dropped
	// (control batches, skipped batches): a fetch from it continues the
	// conversion. It is FirstOffset when nothing was consumed.
	NextOffset int64
	// Partial reports that the conversion stopped before the end of src:
	// MaxBytes was reached, a zstd batch follows, or src ends inside a
	// batch.
	Partial bool
}

// DownConvert appends to dst the v2 batches of src converted to the legacy
// format opts.Magic and returns the extended slice. src is a run of whole
// batches as the log stores them, possibly ending in a partial batch (which
// is ignored, as a fetch's trailing partial batch is). Batches are
// decompressed one at a time, so the memory used beyond dst is about one
// batch's records.
//
// Errors wrap ErrCorruptMessage (a batch that does not parse),
// ErrDownConvertZstd, ErrTooLarge (a batch beyond MaxUncompressed), or
// ErrUnsupportedVersion (magic not 0 or 1, or a stored batch that is not
// v2). On error dst is returned as far as it was converted, and the result
// describes that prefix. Safe for concurrent use.
func DownConvert(dst, src []byte, opts DownConvertOptions) ([]byte, DownConvertResult, error) {
	res := DownConvertResult{NextOffset: opts.FirstOffset}
	if opts.Magic != MagicV0 && opts.Magic != MagicV1 {
		return dst, res, fmt.Errorf("%w: down-conversion to magic %d", ErrUnsupportedVersion, opts.Magic)
	}
	maxUncompressed := opts.MaxUncompressed
	if maxUncompressed <= 0 {
		maxUncompressed = DefaultMaxUncompressedBytes
	}
	start := len(dst)
	bufp := getBuffer()
	defer putBuffer(bufp)
	var inner []byte // a wrapper's inner message set, reused
	for pos := 0; pos < len(src); {
		if len(src)-pos < HeaderSize {
			res.Partial = true
			break
		}
		h, err := ParseHeader(src[pos:])
		if err != nil {
			return dst, res, fmt.Errorf("%w: %w", ErrCorruptMessage, err)
		}
		if h.BatchLength < minBatchLength {
			return dst, res, fmt.Errorf("%w: batch at %d: length %d is below the minimum %d", ErrCorruptMessage, h.BaseOffset, h.BatchLength, minBatchLength)
		}
		if h.Size() > int64(len(src)-pos) {
			res.Partial = true // a fetch's trailing partial batch
			break
		}
		if h.Magic != MagicV2 {
			return dst, res, fmt.Errorf("%w: stored batch at %d has magic %d", ErrUnsupportedVersion, h.BaseOffset, h.Magic)
		}
		batch := src[pos : pos+int(h.Size())]
		pos += int(h.Size())
		if h.IsControl() || h.LastOffset() < opts.FirstOffset || (opts.Skip != nil && opts.Skip(&h)) {
			res.NextOffset = max(res.NextOffset, h.LastOffset()+1)
			continue
		}
		codec := h.Compression()
		if codec == CompressionZstd {
			res.Partial = true
			if len(dst) == start {
				return dst, res, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, ErrDownConvertZstd)
			}
			break
		}
		body := batch[HeaderSize:]
		if codec != CompressionNone {
			if *bufp, err = decompressAppend(codec, (*bufp)[:0], body, maxUncompressed); err != nil {
				return dst, res, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
			}
			body = *bufp
		}
		var stop bool
		if codec == CompressionNone {
			dst, stop, err = downAppendPlain(dst, start, body, &h, &opts, &res)
		} else {
			dst, inner, stop, err = downAppendWrapper(dst, start, inner, body, &h, &opts, &res)
		}
		if err != nil {
			return dst, res, err
		}
		if stop {
			res.Partial = true
			break
		}
		res.NextOffset = max(res.NextOffset, h.LastOffset()+1)
	}
	return dst, res, nil
}

// downRecords calls fn with every record of the uncompressed records section
// body of batch h, with its absolute offset and legacy timestamp, until fn
// returns false.
func downRecords(body []byte, h *Header, fn func(off, ts int64, key, value []byte) bool) error {
	logAppend := h.Attributes&AttrTimestampLogAppend != 0
	for pos, n := 0, int32(0); pos < len(body); n++ {
		if n >= h.RecordCount {
			return fmt.Errorf("%w: batch at offset %d: %d bytes remain after the %d records the header announces", ErrCorruptMessage, h.BaseOffset, len(body)-pos, h.RecordCount)
		}
		length, p := readVarint(body, pos)
		if p < 0 || length < 1 || int(length) > len(body)-p {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, recordErr(ErrCorruptMessage, n, "bad record length"))
		}
		pos = p + int(length)
		rec, err := decodeRecord(body[p:pos], n)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		ts := h.FirstTimestamp + rec.TimestampDelta
		if logAppend {
			ts = h.MaxTimestamp
		}
		if !fn(h.BaseOffset+int64(rec.OffsetDelta), ts, rec.Key, rec.Value) {
			return nil
		}
	}
	return nil
}

// downAppendPlain appends the records of an uncompressed batch as legacy
// messages, stopping before one that would pass opts.MaxBytes (unless
// nothing was written since start). It reports whether it stopped early.
func downAppendPlain(dst []byte, start int, body []byte, h *Header, opts *DownConvertOptions, res *DownConvertResult) ([]byte, bool, error) {
	attrs := downTimestampAttr(h, opts.Magic)
	stop := false
	err := downRecords(body, h, func(off, ts int64, key, value []byte) bool {
		if off < opts.FirstOffset {
			return true
		}
		size := downMessageSize(opts.Magic, key, value)
		if opts.MaxBytes > 0 && len(dst) > start && len(dst)-start+size > opts.MaxBytes {
			stop = true
			return false
		}
		dst = downAppendMessage(dst, opts.Magic, attrs, off, ts, key, value)
		res.Messages++
		res.NextOffset = off + 1
		return true
	})
	return dst, stop, err
}

// downAppendWrapper appends the records of a compressed batch (decompressed
// into body) as one wrapper message of the same codec. inner is scratch
// space, returned for reuse. It reports whether it stopped because the
// wrapper would pass opts.MaxBytes.
func downAppendWrapper(dst []byte, start int, inner, body []byte, h *Header, opts *DownConvertOptions, res *DownConvertResult) ([]byte, []byte, bool, error) {
	attrs := downTimestampAttr(h, opts.Magic)
	inner = inner[:0]
	var (
		first, last int64 = -1, -1
		maxTS       int64 = -1
		n           int
	)
	err := downRecords(body, h, func(off, ts int64, key, value []byte) bool {
		if off < opts.FirstOffset {
			return true
		}
		if first < 0 {
			first = off
		}
		last = off
		maxTS = max(maxTS, ts)
		inner = downAppendMessage(inner, opts.Magic, attrs, off, ts, key, value)
		n++
		return true
	})
	if err != nil || n == 0 {
		return dst, inner, false, err
	}
	if opts.Magic == MagicV1 {
		// Inner offsets relative to the first inner record.
		for p := 0; p < len(inner); {
			off := int64(binary.BigEndian.Uint64(inner[p:]))
			binary.BigEndian.PutUint64(inner[p:], uint64(off-first))
			p += downLogOverhead + int(binary.BigEndian.Uint32(inner[p+LegacyOffsetSize:]))
		}
	}
	if h.Attributes&AttrTimestampLogAppend != 0 {
		maxTS = h.MaxTimestamp
	}
	codec := h.Compression()
	// Compress after a reserved wrapper header, then fill the header in.
	hdr := LegacyHeaderSizeV0
	if opts.Magic == MagicV1 {
		hdr = LegacyHeaderSizeV1
	}
	mark := len(dst)
	dst = slices.Grow(dst, hdr+8+len(inner)/2+64)
	dst = dst[:mark+hdr+8] // header, null key, value length
	var err2 error
	switch codec {
	case CompressionSnappy:
		dst = downAppendXerial(dst, inner)
	case CompressionLZ4:
		lz := len(dst)
		if dst, err2 = Compress(CompressionLZ4, dst, inner); err2 == nil && opts.Magic == MagicV0 {
			downBreakLZ4HeaderChecksum(dst[lz:])
		}
	default:
		dst, err2 = Compress(codec, dst, inner)
	}
	if err2 != nil {
		return dst[:mark], inner, false, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err2)
	}
	valueLen := len(dst) - mark - hdr - 8
	if opts.MaxBytes > 0 && mark > start && len(dst)-start > opts.MaxBytes {
		return dst[:mark], inner, true, nil
	}
	w := dst[mark:]
	be := binary.BigEndian
	be.PutUint64(w[LegacyOffsetOffset:], uint64(last))
	be.PutUint32(w[LegacyOffsetSize:], uint32(len(w)-downLogOverhead))
	w[LegacyOffsetMagic] = byte(opts.Magic)
	w[LegacyOffsetAttributes] = attrs | byte(codec)
	if opts.Magic == MagicV1 {
		be.PutUint64(w[LegacyOffsetTimestamp:], uint64(maxTS))
	}
	be.PutUint32(w[hdr:], 0xffffffff) // null key
	be.PutUint32(w[hdr+4:], uint32(valueLen))
	be.PutUint32(w[LegacyOffsetCRC:], crc32.ChecksumIEEE(w[LegacyOffsetMagic:]))
	res.Messages += n
	res.NextOffset = last + 1
	return dst, inner, false, nil
}

// downTimestampAttr is the timestamp-type attribute of the legacy messages
// made from batch h.
func downTimestampAttr(h *Header, magic int8) byte {
	if magic == MagicV1 && h.Attributes&AttrTimestampLogAppend != 0 {
		return LegacyAttrLogAppendTime
	}
	return 0
}

// downLogOverhead is the part of a legacy log entry not counted by its
// MessageSize: the offset and the size.
const downLogOverhead = LegacyOffsetCRC

// downMessageSize is the size of an uncompressed legacy log entry
// (offset and size fields included) holding key and value.
func downMessageSize(magic int8, key, value []byte) int {
	hdr := LegacyHeaderSizeV0
	if magic == MagicV1 {
		hdr = LegacyHeaderSizeV1
	}
	return hdr + 8 + len(key) + len(value)
}

// downAppendMessage appends one uncompressed legacy log entry: the offset,
// size, CRC, magic, attrs (timestamp type bit only, for magic 1), the
// timestamp (magic 1 only), key and value (nil is null).
func downAppendMessage(dst []byte, magic int8, attrs byte, offset, timestamp int64, key, value []byte) []byte {
	size := downMessageSize(magic, key, value)
	mark := len(dst)
	dst = slices.Grow(dst, size)
	dst = dst[:mark+LegacyOffsetAttributes+1]
	be := binary.BigEndian
	be.PutUint64(dst[mark+LegacyOffsetOffset:], uint64(offset))
	be.PutUint32(dst[mark+LegacyOffsetSize:], uint32(size-downLogOverhead))
	dst[mark+LegacyOffsetMagic] = byte(magic)
	dst[mark+LegacyOffsetAttributes] = attrs
	if magic == MagicV1 {
		dst = be.AppendUint64(dst, uint64(timestamp))
	}
	dst = downAppendBytes(dst, key)
	dst = downAppendBytes(dst, value)
	be.PutUint32(dst[mark+LegacyOffsetCRC:], crc32.ChecksumIEEE(dst[mark+LegacyOffsetMagic:]))
	return dst
}

func downAppendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// downXerialBlock is the uncompressed size of one xerial chunk, the Java
// snappy library's default block size.
const downXerialBlock = 32 << 10

// downAppendXerial appends src snappy-compressed in the xerial framing the
// Java client writes (and every client reads): the header, then chunks of
// (int32 length, raw snappy block).
func downAppendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // compatible version
	for len(src) > 0 {
		chunk := src[:min(len(src), downXerialBlock)]
		src = src[len(chunk):]
		n := snappy.MaxEncodedLen(len(chunk))
		at := len(dst)
		dst = slices.Grow(dst, 4+n)
		enc := snappy.Encode(dst[at+4:at+4+n], chunk)
		dst = dst[:at+4+len(enc)]
		binary.BigEndian.PutUint32(dst[at:], uint32(len(enc)))
	}
	return dst
}

// downBreakLZ4HeaderChecksum rewrites the header checksum of the lz4 frame
// at the start of frame the way Kafka's magic 0 writers computed it (over
// the frame magic and the descriptor, not the descriptor alone), which
// magic 0 readers expect.
func downBreakLZ4HeaderChecksum(frame []byte) {
	if len(frame) < 7 {
		return
	}
	hc := 6 // magic, FLG, BD
	if frame[4]&0x08 != 0 {
		hc += 8 // content size
	}
	if frame[4]&0x01 != 0 {
		hc += 4 // dictionary id
	}
	if len(frame) <= hc {
		return
	}
	frame[hc] = byte(xxh32(frame[:hc]) >> 8)
}
