package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
)

// downTestMsg is one legacy message as a reader sees it after unwrapping.
type downTestMsg struct {
	offset    int64
	timestamp int64 // -1 for magic 0
	attrs     byte  // of the message itself (inner messages: their own)
	wrapper   byte  // codec of the wrapper it came from, 0 when none
	key       []byte
	value     []byte
}

// downTestParse decodes a legacy message set as an old client does:
// checking each CRC and magic, unwrapping compressed wrappers (making inner
// relative offsets of magic 1 absolute), and ignoring a trailing partial
// message. brokenLZ4 says that lz4 header checksums must be Kafka's magic 0
// ones.
func downTestParse(t *testing.T, set []byte, magic int8, brokenLZ4 bool) []downTestMsg {
	t.Helper()
	var out []downTestMsg
	be := binary.BigEndian
	for pos := 0; pos < len(set); {
		if len(set)-pos < LegacyOffsetCRC {
			break
		}
		size := int(be.Uint32(set[pos+LegacyOffsetSize:]))
		if pos+LegacyOffsetCRC+size > len(set) {
			break // partial trailing message
		}
		m := set[pos : pos+LegacyOffsetCRC+size]
		pos += len(m)
		if got, want := be.Uint32(m[LegacyOffsetCRC:]), crc32.ChecksumIEEE(m[LegacyOffsetMagic:]); got != want {
			t.Fatalf("message at %d: crc %x, want %x", be.Uint64(m), got, want)
		}
		if int8(m[LegacyOffsetMagic]) != magic {
			t.Fatalf("message magic %d, want %d", m[LegacyOffsetMagic], magic)
		}
		msg := downTestMsg{offset: int64(be.Uint64(m)), timestamp: -1, attrs: m[LegacyOffsetAttributes]}
		i := LegacyHeaderSizeV0
		if magic == MagicV1 {
			msg.timestamp = int64(be.Uint64(m[LegacyOffsetTimestamp:]))
			i = LegacyHeaderSizeV1
		}
		read := func() []byte {
			n := int32(be.Uint32(m[i:]))
			i += 4
			if n < 0 {
				return nil
			}
			b := m[i : i+int(n)]
			i += int(n)
			return b
		}
		msg.key, msg.value = read(), read()
		if i != len(m) {
			t.Fatalf("message at %d: %d bytes after the value", msg.offset, len(m)-i)
		}
		codec := Compression(msg.attrs & LegacyAttrCompressionMask)
		if codec == CompressionNone {
			out = append(out, msg)
			continue
		}
		value := msg.value
		if codec == CompressionLZ4 {
			value = downTestCheckLZ4Header(t, value, brokenLZ4)
		}
		if codec == CompressionSnappy && !bytes.HasPrefix(value, xerialMagic) {
			t.Fatalf("snappy wrapper at %d is not xerial-framed", msg.offset)
		}
		raw, err := Decompress(codec, value, 1<<30)
		if err != nil {
			t.Fatalf("wrapper at %d: %v", msg.offset, err)
		}
		inner := downTestParse(t, raw, magic, brokenLZ4)
		if len(inner) == 0 {
			t.Fatalf("wrapper at %d is empty", msg.offset)
		}
		shift := int64(0)
		if magic == MagicV1 {
			shift = msg.offset - inner[len(inner)-1].offset
		} else if inner[len(inner)-1].offset != msg.offset {
			t.Fatalf("magic 0 wrapper offset %d, last inner %d", msg.offset, inner[len(inner)-1].offset)
		}
		for _, in := range inner {
			in.offset += shift
			in.wrapper = byte(codec)
			out = append(out, in)
		}
	}
	return out
}

// downTestCheckLZ4Header checks the lz4 frame header checksum is the one
// Kafka writes for the magic (broken: over the frame magic too) and returns
// the frame with a standard checksum, for the decoder.
func downTestCheckLZ4Header(t *testing.T, frame []byte, broken bool) []byte {
	t.Helper()
	const hc = 6 // our frames have no content size nor dictionary id
	good := byte(xxh32(frame[4:hc]) >> 8)
	bad := byte(xxh32(frame[:hc]) >> 8)
	want := good
	if broken {
		want = bad
	}
	if frame[hc] != want {
		t.Fatalf("lz4 header checksum %x, want %x (broken=%v)", frame[hc], want, broken)
	}
	fixed := bytes.Clone(frame)
	fixed[hc] = good
	return fixed
}

func downTestRecords(n int, prefix string) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{
			TimestampDelta: int64(i * 10),
			Key:            fmt.Appendf(nil, "%s-k%d", prefix, i),
			Value:          fmt.Appendf(nil, "%s-v%d", prefix, i),
			Headers:        []RecordHeader{{Key: "h", Value: []byte("x")}},
		}
	}
	if n > 1 {
		recs[1].Key = nil // a null key
	}
	if n > 2 {
		recs[2].Value = nil // a tombstone
	}
	return recs
}

func TestDownConvertEveryCodecAndMagic(t *testing.T) {
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4} {
		for _, magic := range []int8{MagicV0, MagicV1} {
			t.Run(fmt.Sprintf("%s/magic%d", codec, magic), func(t *testing.T) {
				recs := downTestRecords(5, "a")
				src := BuildBatch(BuildOptions{BaseOffset: 100, FirstTimestamp: 1_000, Compression: codec}, recs)
				src = append(src, BuildBatch(BuildOptions{BaseOffset: 105, FirstTimestamp: 2_000, Compression: codec,
					Idempotent: true, ProducerID: 7, BaseSequence: 0}, downTestRecords(3, "b"))...)
				out, res, err := DownConvert(nil, src, DownConvertOptions{Magic: magic, FirstOffset: 100})
				if err != nil {
					t.Fatal(err)
				}
				if res.Messages != 8 || res.NextOffset != 108 || res.Partial {
					t.Fatalf("result %+v, want 8 messages, next 108, whole", res)
				}
				got := downTestParse(t, out, magic, magic == MagicV0)
				if len(got) != 8 {
					t.Fatalf("%d messages, want 8", len(got))
				}
				all := append(downTestRecords(5, "a"), downTestRecords(3, "b")...)
				for i, m := range got {
					r := all[i]
					wantTS := int64(1_000 + 10*i)
					if i >= 5 {
						wantTS = int64(2_000 + 10*(i-5))
					}
					if magic == MagicV0 {
						wantTS = -1
					}
					if m.offset != int64(100+i) || m.timestamp != wantTS || !bytes.Equal(m.key, r.Key) ||
						!bytes.Equal(m.value, r.Value) || (m.key == nil) != (r.Key == nil) || (m.value == nil) != (r.Value == nil) {
						t.Errorf("message %d: offset %d ts %d key %q value %q; want %d %d %q %q",
							i, m.offset, m.timestamp, m.key, m.value, 100+i, wantTS, r.Key, r.Value)
					}
					if m.wrapper != byte(codec) || m.attrs&LegacyAttrCompressionMask != 0 {
						t.Errorf("message %d: wrapper codec %d attrs %x, want %d and no codec bits", i, m.wrapper, m.attrs, codec)
					}
				}
			})
		}
	}
}

func TestDownConvertWrapperLayout(t *testing.T) {
	src := BuildBatch(BuildOptions{BaseOffset: 50, FirstTimestamp: 7_000, Compression: CompressionGzip}, downTestRecords(4, "w"))
	for _, magic := range []int8{MagicV0, MagicV1} {
		out, _, err := DownConvert(nil, src, DownConvertOptions{Magic: magic, FirstOffset: 51})
		if err != nil {
			t.Fatal(err)
		}
		// One wrapper carrying the last offset; its inner offsets are
		// absolute (magic 0) or relative to the first kept record (magic 1).
		if off := int64(binary.BigEndian.Uint64(out)); off != 53 {
			t.Fatalf("magic %d: wrapper offset %d, want 53", magic, off)
		}
		hdr := LegacyHeaderSizeV0
		if magic == MagicV1 {
			hdr = LegacyHeaderSizeV1
			if ts := int64(binary.BigEndian.Uint64(out[LegacyOffsetTimestamp:])); ts != 7_030 {
				t.Fatalf("wrapper timestamp %d, want the max 7030", ts)
			}
		}
		if size := LegacyOffsetCRC + int(binary.BigEndian.Uint32(out[LegacyOffsetSize:])); size != len(out) {
			t.Fatalf("magic %d: one wrapper of %d bytes expected, output %d", magic, size, len(out))
		}
		vlen := int(binary.BigEndian.Uint32(out[hdr+4:]))
		raw, err := Decompress(CompressionGzip, out[hdr+8:hdr+8+vlen], 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var inner []int64
		for p := 0; p < len(raw); p += LegacyOffsetCRC + int(binary.BigEndian.Uint32(raw[p+LegacyOffsetSize:])) {
			inner = append(inner, int64(binary.BigEndian.Uint64(raw[p:])))
		}
		want := []int64{51, 52, 53}
		if magic == MagicV1 {
			want = []int64{0, 1, 2}
		}
		if fmt.Sprint(inner) != fmt.Sprint(want) {
			t.Fatalf("magic %d: inner offsets %v, want %v", magic, inner, want)
		}
	}
}

func TestDownConvertLogAppendTime(t *testing.T) {
	for _, codec := range []Compression{CompressionNone, CompressionSnappy} {
		src := BuildBatch(BuildOptions{BaseOffset: 0, FirstTimestamp: 10, Compression: codec}, downTestRecords(3, "l"))
		SetLogAppendTime(src, 99_999)
		out, _, err := DownConvert(nil, src, DownConvertOptions{Magic: MagicV1})
		if err != nil {
			t.Fatal(err)
		}
		if codec != CompressionNone {
			if ts := int64(binary.BigEndian.Uint64(out[LegacyOffsetTimestamp:])); ts != 99_999 || out[LegacyOffsetAttributes]&LegacyAttrLogAppendTime == 0 {
				t.Fatalf("%s wrapper: ts %d attrs %x, want LogAppendTime 99999", codec, ts, out[LegacyOffsetAttributes])
			}
		}
		for _, m := range downTestParse(t, out, MagicV1, false) {
			if m.timestamp != 99_999 || m.attrs&LegacyAttrLogAppendTime == 0 {
				t.Fatalf("%s: message %d ts %d attrs %x, want LogAppendTime 99999", codec, m.offset, m.timestamp, m.attrs)
			}
		}
		// Magic 0 has neither timestamp nor the bit.
		out, _, err = DownConvert(nil, src, DownConvertOptions{Magic: MagicV0})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range downTestParse(t, out, MagicV0, true) {
			if m.attrs&^LegacyAttrCompressionMask != 0 {
				t.Fatalf("magic 0 message with attrs %x", m.attrs)
			}
		}
	}
}

func TestDownConvertDropsControlSkippedAndEarlier(t *testing.T) {
	var src []byte
	src = append(src, BuildBatch(BuildOptions{BaseOffset: 0}, downTestRecords(3, "early"))...)
	src = append(src, BuildBatch(BuildOptions{BaseOffset: 3, Transactional: true, ProducerID: 9}, downTestRecords(2, "aborted"))...)
	src = append(src, BuildBatch(BuildOptions{BaseOffset: 5, Control: true, ProducerID: 9},
		[]Record{{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}})...)
	src = append(src, BuildBatch(BuildOptions{BaseOffset: 6, Transactional: true, ProducerID: 10, Compression: CompressionLZ4}, downTestRecords(2, "committed"))...)
	src = append(src, BuildBatch(BuildOptions{BaseOffset: 8, Control: true, ProducerID: 10},
		[]Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}})...)
	skip := func(h *Header) bool { return h.ProducerID == 9 }
	out, res, err := DownConvert(nil, src, DownConvertOptions{Magic: MagicV1, FirstOffset: 2, Skip: skip})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range downTestParse(t, out, MagicV1, false) {
		got = append(got, fmt.Sprintf("%d:%s", m.offset, m.value))
	}
	want := "[2: 6:committed-v0 7:committed-v1]" // record 2 is a tombstone
	if fmt.Sprint(got) != want {
		t.Fatalf("converted %v, want %v", got, want)
	}
	if res.NextOffset != 9 || res.Messages != 3 || res.Partial {
		t.Fatalf("result %+v, want next 9 (after the last marker), 3 messages, whole", res)
	}
}

func TestDownConvertMaxBytes(t *testing.T) {
	recs := downTestRecords(10, "m")
	plain := BuildBatch(BuildOptions{BaseOffset: 0}, recs)
	one := downMessageSize(MagicV1, recs[0].Key, recs[0].Value)

	// Uncompressed: stops between messages.
	out, res, err := DownConvert(nil, plain, DownConvertOptions{Magic: MagicV1, MaxBytes: 3*one + 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 3 || !res.Partial || res.NextOffset != 3 || len(out) > 3*one+1 {
		t.Fatalf("result %+v, %d bytes; want 3 messages within %d bytes, partial, next 3", res, len(out), 3*one+1)
	}
	// The first message is written whole, whatever MaxBytes says.
	out, res, err = DownConvert(nil, plain, DownConvertOptions{Magic: MagicV1, MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 1 || len(out) != one {
		t.Fatalf("MaxBytes 1: %+v, %d bytes; want the first message whole (%d bytes)", res, len(out), one)
	}
	// Compressed: whole wrappers or nothing after the first.
	var two []byte
	two = append(two, BuildBatch(BuildOptions{BaseOffset: 0, Compression: CompressionGzip}, recs)...)
	two = append(two, BuildBatch(BuildOptions{BaseOffset: 10, Compression: CompressionGzip}, recs)...)
	out, res, err = DownConvert(nil, two, DownConvertOptions{Magic: MagicV0, MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 10 || res.NextOffset != 10 || !res.Partial || len(downTestParse(t, out, MagicV0, true)) != 10 {
		t.Fatalf("compressed MaxBytes 1: %+v, want the first wrapper only", res)
	}
	// A trailing partial batch is ignored.
	out, res, err = DownConvert(nil, two[:len(two)-5], DownConvertOptions{Magic: MagicV0})
	if err != nil || res.Messages != 10 || !res.Partial {
		t.Fatalf("partial trailing batch: %+v, %v; want the first batch, partial", res, err)
	}
	_ = out
}

func TestDownConvertZstd(t *testing.T) {
	z := BuildBatch(BuildOptions{BaseOffset: 3, Compression: CompressionZstd}, downTestRecords(2, "z"))
	_, res, err := DownConvert(nil, z, DownConvertOptions{Magic: MagicV1})
	if !errors.Is(err, ErrDownConvertZstd) || !errors.Is(err, ErrUnsupportedCompression) {
		t.Fatalf("zstd first: %v, want ErrDownConvertZstd", err)
	}
	if res.Messages != 0 {
		t.Fatalf("zstd first: %+v", res)
	}
	src := append(BuildBatch(BuildOptions{BaseOffset: 0}, downTestRecords(3, "p")), z...)
	out, res, err := DownConvert(nil, src, DownConvertOptions{Magic: MagicV1})
	if err != nil {
		t.Fatalf("zstd after data: %v, want the data before it", err)
	}
	if res.Messages != 3 || res.NextOffset != 3 || !res.Partial || len(downTestParse(t, out, MagicV1, false)) != 3 {
		t.Fatalf("zstd after data: %+v", res)
	}
}

func TestDownConvertRejects(t *testing.T) {
	src := BuildBatch(BuildOptions{}, downTestRecords(1, "r"))
	if _, _, err := DownConvert(nil, src, DownConvertOptions{Magic: 2}); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("magic 2: %v", err)
	}
	bad := bytes.Clone(src)
	binary.BigEndian.PutUint32(bad[OffsetRecordCount:], 0)
	if _, _, err := DownConvert(nil, bad, DownConvertOptions{Magic: MagicV1}); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("wrong record count: %v", err)
	}
	big := BuildBatch(BuildOptions{Compression: CompressionGzip}, []Record{{Value: make([]byte, 1<<20)}})
	if _, _, err := DownConvert(nil, big, DownConvertOptions{Magic: MagicV1, MaxUncompressed: 1 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("decompression cap: %v", err)
	}
}

func TestDownXXH32(t *testing.T) {
	for in, want := range map[string]uint32{"": 0x02cc5d05, "a": 0x550d7456, "abc": 0x32d153ff,
		"Nobody inspects the spammish repetition": 0xe2293b2f} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %08x, want %08x", in, got, want)
		}
	}
	// The lz4 writer's own header checksum agrees with ours.
	frame, err := Compress(CompressionLZ4, nil, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := byte(xxh32(frame[4:6]) >> 8); got != frame[6] {
		t.Fatalf("header checksum %x, lz4 writer wrote %x", got, frame[6])
	}
}

func BenchmarkDownConvert(b *testing.B) {
	recs := make([]Record, 64)
	for i := range recs {
		recs[i] = Record{TimestampDelta: int64(i), Value: bytes.Repeat([]byte{byte(i)}, 1024)}
	}
	for _, codec := range []Compression{CompressionNone, CompressionLZ4} {
		var src []byte
		for i := range 16 {
			src = append(src, BuildBatch(BuildOptions{BaseOffset: int64(i * 64), Compression: codec}, recs)...)
		}
		for _, magic := range []int8{MagicV0, MagicV1} {
			b.Run(fmt.Sprintf("%s/magic%d", codec, magic), func(b *testing.B) {
				b.SetBytes(int64(len(recs) * 16 * 1024))
				b.ReportAllocs()
				var dst []byte
				for b.Loop() {
					var err error
					if dst, _, err = DownConvert(dst[:0], src, DownConvertOptions{Magic: magic}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
