package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
)

// Up-conversion: legacy message sets (magic 0 and 1) produced by clients
// before Kafka 0.11 (Produce v0-v2) become one v2 batch, as Kafka's
// LogValidator does when the log's message format is v2
// (convertAndAssignOffsetsNonCompressed, validateMessagesAndAssignOffsetsCompressed):
//
//   - every message is checked: entry framing, CRC-32 (IEEE) of
//     [Magic:], one magic for the whole set, the codec; a compressed set is
//     exactly one wrapper message whose value decompresses to inner
//     messages of the wrapper's magic, none of them compressed, each with a
//     valid CRC; a magic 1 wrapper carries the absolute offset of its last
//     inner message (or 0, as some librdkafka versions wrote);
//   - each message becomes one record with its key and value and no
//     headers; magic 0 has no timestamp (-1), magic 1 keeps the producer's
//     (a LogAppendTime wrapper's own timestamp for its inner messages);
//   - the batch is a plain producer's (producer id -1), base offset 0 and
//     CreateTime: the broker then assigns offsets and, for a LogAppendTime
//     topic, stamps the batch as for any v2 batch;
//   - the batch is compressed with the topic's codec, or with the
//     producer's when compression.type is "producer" (Kafka's
//     targetCompression);
//   - snappy may be xerial-framed (the Java client) or raw; lz4 is the frame
//     format, whose header checksum magic 0 writers computed wrongly (over
//     the frame magic too): for magic 0 it is ignored, as Kafka's
//     Lz4BlockInputStream does;
//   - zstd never existed in the legacy formats: Kafka's legacy record
//     iterator refuses a zstd wrapper with InvalidRecordException
//     (INVALID_RECORD), and so does UpConvert.
//
// Deviations: Kafka silently drops a partial message at the end of a set
// (outer or inner); UpConvert refuses it as corrupt. Codec ids 5-7 are
// ErrUnsupportedCompression (Kafka fails them with an internal error).

// ErrInvalidTimestamp means a magic 1 message carries a timestamp outside
// the topic's message.timestamp.before.max.ms / after.max.ms window, or
// claims LogAppendTime where Kafka refuses it. Kafka: INVALID_TIMESTAMP (32).
var ErrInvalidTimestamp = errors.New("invalid timestamp")

// UpConvertOptions says how UpConvert validates a legacy message set and
// builds its batch. The zero value writes an uncompressed batch and applies
// no size cap (beyond the default decompression limit) and no timestamp
// window.
type UpConvertOptions struct {
	// KeepCompression writes the batch with the producer's codec, the
	// wrapper's (none for uncompressed messages), as compression.type
	// "producer" asks. Otherwise Compression is used.
	KeepCompression bool
	// Compression is the batch codec when KeepCompression is false: the
	// topic's compression.type.
	Compression Compression

	// MaxMessageBytes caps each entry of the set, log overhead included
	// (the topic's max.message.bytes): a bigger one fails with
	// ErrTooLarge. <= 0 means no cap.
	MaxMessageBytes int
	// MaxUncompressedBytes caps the decompressed value of a wrapper; <= 0
	// means DefaultMaxUncompressedBytes.
	MaxUncompressedBytes int

	// LogAppendTime says the topic's message.timestamp.type is
	// LogAppendTime: the producer's timestamps are not range-checked, and
	// a message that claims LogAppendTime itself is refused.
	LogAppendTime bool
	// Now is the broker's clock in milliseconds for the timestamp window
	// of CreateTime topics: a magic 1 timestamp must lie within
	// [Now-TimestampBeforeMaxMs, Now+TimestampAfterMaxMs]. Now <= 0 skips
	// the window.
	Now                  int64
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
}

// UpConvertResult describes a converted message set.
type UpConvertResult struct {
	// Magic is the magic of the set's messages, MagicV0 or MagicV1.
	Magic int8
	// Records is the number of records in the batch (inner messages of a
	// wrapper, or the set's messages).
	Records int
	// SourceCompression is the producer's codec (the wrapper's).
	SourceCompression Compression
	// Compression is the codec of the batch written.
	Compression Compression
	// MaxTimestamp is the batch's MaxTimestamp (-1 for magic 0).
	MaxTimestamp int64
}

// IsLegacySet reports whether b starts with a legacy message (magic 0 or 1)
// rather than a v2 batch, reading only the magic byte. Producers of
// Produce v0-v2 may send either.
func IsLegacySet(b []byte) bool {
	return len(b) > LegacyOffsetMagic && (b[LegacyOffsetMagic] == MagicV0 || b[LegacyOffsetMagic] == MagicV1)
}

// legacyUpMinSize is the smallest MessageSize Kafka reads (a magic 0
// message without key and value, counted from the CRC): its
// LegacyRecord.RECORD_OVERHEAD_V0.
const legacyUpMinSize = LegacyMinSizeV0 - LegacyOffsetCRC

// UpConvert validates the legacy message set and appends it to dst as one
// v2 batch, returning the extended slice. set must hold whole messages of
// one magic (0 or 1): any number of uncompressed ones, or exactly one
// compressed wrapper. On error dst is returned unchanged in length.
//
// Errors wrap ErrCorruptMessage (framing, CRC, a corrupt compressed value),
// ErrInvalidRecord (mixed magics, several wrappers, nested compression,
// zstd, an inner message of another magic, a wrapper without inner
// messages), ErrUnsupportedCompression (codec ids 5-7), ErrTooLarge (an
// entry beyond MaxMessageBytes, or a value that inflates beyond
// MaxUncompressedBytes) or ErrInvalidTimestamp. It never keeps set and is
// safe for concurrent use.
func UpConvert(dst, set []byte, opts UpConvertOptions) ([]byte, UpConvertResult, error) {
	res := UpConvertResult{Magic: -1, MaxTimestamp: -1}
	// Pass 1, Kafka's analyzeAndValidateRecords: framing, size, magic, CRC
	// and codec of every entry before any message is looked into.
	entries := 0
	for pos := 0; pos < len(set); entries++ {
		e, magic, err := legacyUpEntry(set[pos:], opts.MaxMessageBytes)
		if err != nil {
			return dst, res, fmt.Errorf("entry %d at byte %d: %w", entries, pos, err)
		}
		if res.Magic < 0 {
			res.Magic = magic
		} else if magic != res.Magic {
			return dst, res, fmt.Errorf("%w: entry %d: magic %d is not the same as the first message's magic %d", ErrInvalidRecord, entries, magic, res.Magic)
		}
		if c := Compression(e[LegacyOffsetAttributes] & LegacyAttrCompressionMask); c != CompressionNone {
			res.SourceCompression = c
		}
		pos += len(e)
	}
	if entries == 0 {
		return dst, res, fmt.Errorf("%w: empty message set", ErrInvalidRecord)
	}
	if res.SourceCompression != CompressionNone && entries > 1 {
		return dst, res, fmt.Errorf("%w: a compressed message set must be one wrapper message, found %d messages", ErrInvalidRecord, entries)
	}
	if res.SourceCompression == CompressionZstd {
		// Kafka's legacy deep iterator refuses it: InvalidRecordException.
		return dst, res, fmt.Errorf("%w: zstd compression does not exist in message format v%d", ErrInvalidRecord, res.Magic)
	}
	res.Compression = opts.Compression
	if opts.KeepCompression {
		res.Compression = res.SourceCompression
	}
	if res.Compression < CompressionNone || res.Compression > CompressionZstd {
		return dst, res, fmt.Errorf("%w: codec id %d", ErrUnsupportedCompression, int8(res.Compression))
	}

	// Pass 2: the records, into the records section of the batch. An
	// uncompressed batch is written in place after its header; a
	// compressed one is built in a pooled buffer first.
	start := len(dst)
	u := upConverter{opts: opts, firstTimestamp: -1, maxTimestamp: -1}
	var bodyBuf *[]byte
	if res.Compression == CompressionNone {
		dst = append(dst, make([]byte, HeaderSize)...)
		u.body = dst
	} else {
		bodyBuf = getBuffer()
		defer putBuffer(bodyBuf)
		u.body = (*bodyBuf)[:0]
	}
	var err error
	if res.SourceCompression == CompressionNone {
		u.body = legacyUpGrow(u.body, len(set))
		for pos := 0; pos < len(set); {
			size := int(binary.BigEndian.Uint32(set[pos+LegacyOffsetSize:]))
			e := set[pos : pos+LegacyOffsetCRC+size]
			if err = u.message(e, res.Magic, false, 0); err != nil {
				break
			}
			pos += len(e)
		}
	} else {
		err = u.wrapper(set, res.Magic)
	}
	if bodyBuf != nil {
		*bodyBuf = u.body[:0] // keep a grown buffer for the pool
	}
	if err != nil {
		return dst[:start], res, err
	}
	if u.count == 0 {
		return dst[:start], res, fmt.Errorf("%w: compressed message set with no inner messages", ErrInvalidRecord)
	}

	if res.Compression == CompressionNone {
		dst = u.body
	} else {
		dst = append(dst, make([]byte, HeaderSize)...)
		if dst, err = Compress(res.Compression, dst, u.body); err != nil {
			return dst[:start], res, err
		}
	}
	batch := dst[start:]
	if len(batch)-LogOverhead > 0x7fffffff {
		return dst[:start], res, fmt.Errorf("%w: converted batch of %d bytes", ErrTooLarge, len(batch))
	}
	be := binary.BigEndian
	be.PutUint64(batch[OffsetBaseOffset:], 0)
	be.PutUint32(batch[OffsetBatchLength:], uint32(len(batch)-LogOverhead))
	be.PutUint32(batch[OffsetPartitionLeaderEpoch:], 0xffffffff) // -1
	batch[OffsetMagic] = MagicV2
	be.PutUint16(batch[OffsetAttributes:], uint16(res.Compression))
	be.PutUint32(batch[OffsetLastOffsetDelta:], uint32(u.count-1))
	be.PutUint64(batch[OffsetFirstTimestamp:], uint64(u.firstTimestamp))
	be.PutUint64(batch[OffsetMaxTimestamp:], uint64(u.maxTimestamp))
	be.PutUint64(batch[OffsetProducerID:], 0xffffffffffffffff) // -1
	be.PutUint16(batch[OffsetProducerEpoch:], 0xffff)
	be.PutUint32(batch[OffsetBaseSequence:], 0xffffffff)
	be.PutUint32(batch[OffsetRecordCount:], uint32(u.count))
	be.PutUint32(batch[OffsetCRC:], ComputeCRC(batch))
	res.Records = int(u.count)
	res.MaxTimestamp = u.maxTimestamp
	return dst, res, nil
}

// legacyUpGrow makes room for n more bytes in b.
func legacyUpGrow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		b = append(b[:cap(b)], make([]byte, n)...)[:len(b)]
	}
	return b
}

// legacyUpEntry frames the legacy entry at the start of b and checks what
// Kafka checks of every entry before validation: a size of at least the v0
// overhead (and the v1 one for magic 1), a known magic, the whole entry
// present, max.message.bytes, the CRC and a defined codec. It returns the
// entry and its magic.
func legacyUpEntry(b []byte, maxMessageBytes int) ([]byte, int8, error) {
	if len(b) < LogOverhead {
		return nil, 0, fmt.Errorf("%w: %d bytes left, an entry header needs %d", ErrCorruptMessage, len(b), LogOverhead)
	}
	size := int32(binary.BigEndian.Uint32(b[LegacyOffsetSize:]))
	if size < legacyUpMinSize {
		return nil, 0, fmt.Errorf("%w: record size %d is less than the minimum record overhead (%d)", ErrCorruptMessage, size, legacyUpMinSize)
	}
	if len(b) <= LegacyOffsetMagic {
		return nil, 0, fmt.Errorf("%w: message set ends inside an entry", ErrCorruptMessage)
	}
	magic := int8(b[LegacyOffsetMagic])
	if magic < MagicV0 || magic > MagicV2 {
		return nil, 0, fmt.Errorf("%w: invalid magic found in record: %d", ErrCorruptMessage, magic)
	}
	if magic == MagicV2 {
		return nil, 0, fmt.Errorf("%w: a v2 record batch among legacy messages", ErrInvalidRecord)
	}
	total := int64(size) + LogOverhead
	if total > int64(len(b)) {
		return nil, 0, fmt.Errorf("%w: entry of %d bytes, only %d present", ErrCorruptMessage, total, len(b))
	}
	if maxMessageBytes > 0 && total > int64(maxMessageBytes) {
		return nil, 0, fmt.Errorf("%w: message of %d bytes exceeds max.message.bytes %d", ErrTooLarge, total, maxMessageBytes)
	}
	if magic == MagicV1 && total < LegacyMinSizeV1 {
		return nil, 0, fmt.Errorf("%w: magic 1 record size %d is less than the minimum record overhead (%d)", ErrCorruptMessage, size, LegacyMinSizeV1-LogOverhead)
	}
	e := b[:total]
	if stored, computed := binary.BigEndian.Uint32(e[LegacyOffsetCRC:]), crc32.ChecksumIEEE(e[LegacyOffsetMagic:]); stored != computed {
		return nil, 0, fmt.Errorf("%w: record is corrupt (stored crc = %d, computed crc = %d)", ErrCorruptMessage, stored, computed)
	}
	if c := e[LegacyOffsetAttributes] & LegacyAttrCompressionMask; c > byte(CompressionZstd) {
		return nil, 0, fmt.Errorf("%w: codec id %d", ErrUnsupportedCompression, c)
	}
	return e, magic, nil
}

// upConverter accumulates the v2 records of one converted set.
type upConverter struct {
	opts           UpConvertOptions
	body           []byte // records section (after the header when uncompressed)
	count          int32
	firstTimestamp int64
	maxTimestamp   int64
}

// message appends the record of e, an entry of the given magic whose
// framing and CRC were checked. inner says e is an inner message of a
// wrapper; a magic 1 wrapper with the LogAppendTime attribute passes its
// timestamp as wrapperLAT (>= 0), which its inner messages take, as
// Kafka's legacy deep iterator gives them; otherwise wrapperLAT is -1.
func (u *upConverter) message(e []byte, magic int8, inner bool, wrapperLAT int64) error {
	attrs := e[LegacyOffsetAttributes]
	if attrs&LegacyAttrCompressionMask != 0 {
		// Only inner messages get here: a compressed entry of the set is
		// its only one, and goes to wrapper.
		return fmt.Errorf("%w: message %d: inner messages must not be compressed", ErrInvalidRecord, u.count)
	}
	ts := int64(-1)
	pos := LegacyHeaderSizeV0
	logAppend := false
	if magic == MagicV1 {
		pos = LegacyHeaderSizeV1
		ts = int64(binary.BigEndian.Uint64(e[LegacyOffsetTimestamp:]))
		logAppend = attrs&LegacyAttrLogAppendTime != 0
		if inner {
			// The wrapper decides the timestamp type of its messages
			// (Kafka's batch.timestampType()).
			logAppend = wrapperLAT >= 0
			if logAppend {
				ts = wrapperLAT
			}
		}
	}
	key, pos, err := legacyUpBytes(e, pos, "key")
	if err != nil {
		return fmt.Errorf("message %d: %w", u.count, err)
	}
	value, pos, err := legacyUpBytes(e, pos, "value")
	if err != nil {
		return fmt.Errorf("message %d: %w", u.count, err)
	}
	if pos != len(e) {
		return fmt.Errorf("%w: message %d: %d bytes after the value", ErrCorruptMessage, u.count, len(e)-pos)
	}
	if ts < -1 {
		// Kafka's MemoryRecordsBuilder refuses it (as an internal error).
		return fmt.Errorf("%w: message %d: negative timestamp %d", ErrInvalidTimestamp, u.count, ts)
	}
	if err := u.checkTimestamp(ts, logAppend, int64(binary.BigEndian.Uint64(e))); err != nil {
		return err
	}
	if u.count == 0 {
		u.firstTimestamp = ts
	}
	if ts > u.maxTimestamp {
		u.maxTimestamp = ts
	}
	u.body = legacyUpAppendRecord(u.body, ts-u.firstTimestamp, u.count, key, value)
	u.count++
	return nil
}

// legacyUpAppendRecord appends a v2 record without headers. Its length is
// known before it is written, so nothing is moved afterwards (appendRecord
// must shift records of 64 bytes and more).
func legacyUpAppendRecord(b []byte, tsDelta int64, offsetDelta int32, key, value []byte) []byte {
	n := 1 + legacyUpVarlongLen(tsDelta) + varintLen(offsetDelta) + 1 // attributes, deltas, header count
	n += legacyUpBytesLen(key) + legacyUpBytesLen(value)
	b = appendVarint(b, int32(n))
	b = append(b, 0)
	b = appendVarlong(b, tsDelta)
	b = appendVarint(b, offsetDelta)
	b = appendNullableBytes(b, key)
	b = appendNullableBytes(b, value)
	return append(b, 0)
}

// legacyUpBytesLen is the encoded size of a nullable byte field of a v2
// record.
func legacyUpBytesLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int32(len(v))) + len(v)
}

// legacyUpVarlongLen is the encoded size of v as a zigzag varlong.
func legacyUpVarlongLen(v int64) int {
	u := uint64((v << 1) ^ (v >> 63))
	return max(1, (bits.Len64(u)+6)/7)
}

// checkTimestamp applies Kafka's LogValidator.validateTimestamp to one
// message: on a CreateTime topic a timestamp must lie in the window; a
// message that claims LogAppendTime is refused unless a CreateTime topic
// could take its timestamp.
func (u *upConverter) checkTimestamp(ts int64, logAppend bool, offset int64) error {
	o := &u.opts
	if !o.LogAppendTime && ts != -1 {
		if o.Now > 0 && (o.Now-ts > o.TimestampBeforeMaxMs || ts-o.Now > o.TimestampAfterMaxMs) {
			return fmt.Errorf("%w: timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				ErrInvalidTimestamp, ts, offset, o.Now-o.TimestampBeforeMaxMs, o.Now+o.TimestampAfterMaxMs)
		}
		return nil
	}
	if logAppend {
		return fmt.Errorf("%w: message with offset %d: producer should not set timestamp type to LogAppendTime", ErrInvalidTimestamp, offset)
	}
	return nil
}

// legacyUpBytes reads the int32-length-prefixed bytes at e[pos:]: nil for
// length -1, never nil otherwise.
func legacyUpBytes(e []byte, pos int, what string) ([]byte, int, error) {
	if len(e)-pos < 4 {
		return nil, 0, fmt.Errorf("%w: %s length cut short", ErrCorruptMessage, what)
	}
	n := int32(binary.BigEndian.Uint32(e[pos:]))
	pos += 4
	if n == -1 {
		return nil, pos, nil
	}
	if n < 0 || int(n) > len(e)-pos {
		return nil, 0, fmt.Errorf("%w: %s length %d, %d bytes left", ErrCorruptMessage, what, n, len(e)-pos)
	}
	return e[pos : pos+int(n) : pos+int(n)], pos + int(n), nil
}

// wrapper appends the records of the compressed wrapper message w.
func (u *upConverter) wrapper(w []byte, magic int8) error {
	attrs := w[LegacyOffsetAttributes]
	codec := Compression(attrs & LegacyAttrCompressionMask)
	pos := LegacyHeaderSizeV0
	wrapperLAT := int64(-1)
	if magic == MagicV1 {
		pos = LegacyHeaderSizeV1
		if attrs&LegacyAttrLogAppendTime != 0 {
			wrapperLAT = int64(binary.BigEndian.Uint64(w[LegacyOffsetTimestamp:]))
		}
	}
	_, pos, err := legacyUpBytes(w, pos, "wrapper key")
	if err != nil {
		return err
	}
	value, pos, err := legacyUpBytes(w, pos, "wrapper value")
	if err != nil {
		return err
	}
	if pos != len(w) {
		return fmt.Errorf("%w: %d bytes after the wrapper value", ErrCorruptMessage, len(w)-pos)
	}
	if value == nil {
		return fmt.Errorf("%w: compressed message set with a null value (magic %d)", ErrInvalidRecord, magic)
	}
	if codec == CompressionLZ4 && magic == MagicV0 {
		// Magic 0 writers hashed the frame magic into the header
		// checksum; Kafka ignores that checksum for magic 0.
		value = legacyUpFixLZ4HeaderChecksum(value)
	}
	limit := u.opts.MaxUncompressedBytes
	if limit <= 0 {
		limit = DefaultMaxUncompressedBytes
	}
	buf := getBuffer()
	defer putBuffer(buf)
	inner, err := decompressAppend(codec, (*buf)[:0], value, limit)
	*buf = inner[:0]
	if err != nil {
		return fmt.Errorf("wrapper: %w", err)
	}
	u.body = legacyUpGrow(u.body, len(inner))
	lastInner := int64(-1)
	for ip := 0; ip < len(inner); {
		e, err := legacyUpInner(inner[ip:])
		if err != nil {
			return fmt.Errorf("inner message %d: %w", u.count, err)
		}
		if m := int8(e[LegacyOffsetMagic]); m != magic {
			return fmt.Errorf("%w: inner message %d: magic %d does not match the wrapper's magic %d", ErrInvalidRecord, u.count, m, magic)
		}
		if stored, computed := binary.BigEndian.Uint32(e[LegacyOffsetCRC:]), crc32.ChecksumIEEE(e[LegacyOffsetMagic:]); stored != computed {
			return fmt.Errorf("%w: inner message %d: record is corrupt (stored crc = %d, computed crc = %d)", ErrCorruptMessage, u.count, stored, computed)
		}
		if err := u.message(e, magic, true, wrapperLAT); err != nil {
			return err
		}
		lastInner = int64(binary.BigEndian.Uint64(e))
		ip += len(e)
	}
	if magic == MagicV1 && u.count > 0 {
		// Relative inner offsets: the wrapper carries the last one's
		// absolute offset, or 0 (some librdkafka versions).
		if wo := int64(binary.BigEndian.Uint64(w)); wo != 0 && wo < lastInner {
			return fmt.Errorf("%w: wrapper offset %d is less than the last inner message offset %d and it is not zero", ErrInvalidRecord, wo, lastInner)
		}
	}
	return nil
}

// legacyUpInner frames one inner message of a decompressed wrapper value.
func legacyUpInner(b []byte) ([]byte, error) {
	if len(b) < LogOverhead {
		return nil, fmt.Errorf("%w: %d bytes left, an entry header needs %d", ErrCorruptMessage, len(b), LogOverhead)
	}
	size := int32(binary.BigEndian.Uint32(b[LegacyOffsetSize:]))
	if size < legacyUpMinSize {
		return nil, fmt.Errorf("%w: record size %d is less than the minimum record overhead (%d)", ErrCorruptMessage, size, legacyUpMinSize)
	}
	total := int64(size) + LogOverhead
	if total > int64(len(b)) {
		return nil, fmt.Errorf("%w: entry of %d bytes, only %d present", ErrCorruptMessage, total, len(b))
	}
	e := b[:total]
	if m := int8(e[LegacyOffsetMagic]); m == MagicV1 && total < LegacyMinSizeV1 {
		return nil, fmt.Errorf("%w: magic 1 record size %d is less than the minimum record overhead (%d)", ErrCorruptMessage, size, LegacyMinSizeV1-LogOverhead)
	}
	return e, nil
}

// legacyUpFixLZ4HeaderChecksum returns the lz4 frame with its header
// checksum recomputed (a copy when it changes), so that a magic 0 frame
// whose checksum covers the frame magic decodes. Anything that is not a
// frame header is returned as is, for the decoder to refuse.
func legacyUpFixLZ4HeaderChecksum(frame []byte) []byte {
	if len(frame) < 7 || binary.LittleEndian.Uint32(frame) != 0x184D2204 {
		return frame
	}
	hc := 6 // frame magic, FLG, BD
	if frame[4]&0x08 != 0 {
		hc += 8 // content size
	}
	if frame[4]&0x01 != 0 {
		hc += 4 // dictionary id
	}
	if len(frame) <= hc {
		return frame
	}
	want := byte(xxh32(frame[4:hc]) >> 8)
	if frame[hc] == want {
		return frame
	}
	fixed := append([]byte(nil), frame...)
	fixed[hc] = want
	return fixed
}

// LegacyMessage is one message for BuildMessageSet.
type LegacyMessage struct {
	// Offset is written as given: the entry's offset when uncompressed,
	// the inner offset in a wrapper (absolute for magic 0, relative from 0
	// for magic 1, as the clients wrote them).
	Offset int64
	// Timestamp is written for magic 1 only.
	Timestamp int64
	// Key and Value are written as null when nil.
	Key, Value []byte
	// LogAppendTime sets the attribute bit (magic 1), as no producer
	// should.
	LogAppendTime bool
}

// MessageSetOptions describes the legacy message set BuildMessageSet makes.
// The zero value is an uncompressed magic 0 set.
type MessageSetOptions struct {
	// Magic is MagicV0 or MagicV1.
	Magic int8
	// Compression none writes one entry per message; any other codec one
	// wrapper holding them all (zstd too, which no legacy client wrote:
	// for testing refusals).
	Compression Compression
	// XerialSnappy frames snappy as the Java client of that era did
	// (xerial framing); otherwise a raw snappy block.
	XerialSnappy bool
	// WrapperOffset, when set, is the wrapper's offset; by default it is
	// the last message's Offset.
	WrapperOffset *int64
	// WrapperTimestamp is the magic 1 wrapper's timestamp; by default the
	// largest message timestamp.
	WrapperTimestamp *int64
	// WrapperLogAppendTime sets the LogAppendTime bit on the wrapper.
	WrapperLogAppendTime bool
}

// BuildMessageSet returns a legacy message set holding msgs, as clients
// before Kafka 0.11 sent them, for tests and benchmarks in any package.
// A magic 0 lz4 wrapper gets the header checksum those clients computed
// (over the frame magic too). It panics on a bad magic or codec, since it
// is meant for tests.
func BuildMessageSet(opts MessageSetOptions, msgs []LegacyMessage) []byte {
	if opts.Magic != MagicV0 && opts.Magic != MagicV1 {
		panic(fmt.Sprintf("record.BuildMessageSet: magic %d", opts.Magic))
	}
	var set []byte
	for _, m := range msgs {
		var attrs byte
		if m.LogAppendTime {
			attrs |= LegacyAttrLogAppendTime
		}
		set = legacyUpAppendMessage(set, opts.Magic, attrs, m.Offset, m.Timestamp, m.Key, m.Value)
	}
	if opts.Compression == CompressionNone || len(msgs) == 0 {
		return set
	}
	var value []byte
	var err error
	switch {
	case opts.Compression == CompressionSnappy && opts.XerialSnappy:
		value = append(value, xerialMagic...)
		value = binary.BigEndian.AppendUint32(value, 1) // version
		value = binary.BigEndian.AppendUint32(value, 1) // compatible version
		for rest := set; len(rest) > 0; {
			chunk := rest[:min(len(rest), 32<<10)]
			rest = rest[len(chunk):]
			enc, err := Compress(CompressionSnappy, nil, chunk)
			if err != nil {
				panic(fmt.Sprintf("record.BuildMessageSet: %v", err))
			}
			value = binary.BigEndian.AppendUint32(value, uint32(len(enc)))
			value = append(value, enc...)
		}
	default:
		if value, err = Compress(opts.Compression, nil, set); err != nil {
			panic(fmt.Sprintf("record.BuildMessageSet: %v", err))
		}
		if opts.Compression == CompressionLZ4 && opts.Magic == MagicV0 {
			// The descriptor is FLG, BD: no content size nor dictionary.
			value[6] = byte(xxh32(value[:6]) >> 8)
		}
	}
	last := msgs[len(msgs)-1]
	offset := last.Offset
	if opts.WrapperOffset != nil {
		offset = *opts.WrapperOffset
	}
	ts := int64(-1)
	for _, m := range msgs {
		ts = max(ts, m.Timestamp)
	}
	if opts.WrapperTimestamp != nil {
		ts = *opts.WrapperTimestamp
	}
	attrs := byte(opts.Compression)
	if opts.WrapperLogAppendTime {
		attrs |= LegacyAttrLogAppendTime
	}
	return legacyUpAppendMessage(nil, opts.Magic, attrs, offset, ts, nil, value)
}

// legacyUpAppendMessage appends one legacy entry with a valid CRC.
func legacyUpAppendMessage(b []byte, magic int8, attrs byte, offset, ts int64, key, value []byte) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, 0) // size, below
	b = binary.BigEndian.AppendUint32(b, 0) // CRC, below
	b = append(b, byte(magic), attrs)
	if magic == MagicV1 {
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	e := b[start:]
	binary.BigEndian.PutUint32(e[LegacyOffsetSize:], uint32(len(e)-LogOverhead))
	binary.BigEndian.PutUint32(e[LegacyOffsetCRC:], crc32.ChecksumIEEE(e[LegacyOffsetMagic:]))
	return b
}
