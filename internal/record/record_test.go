package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

var allCodecs = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// sampleRecords returns n records mixing null and empty keys and values,
// headers (one with a null value) and negative and positive timestamp deltas.
func sampleRecords(n, valueSize int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := &recs[i]
		r.TimestampDelta = int64(i*7 - 3)
		r.Value = bytes.Repeat([]byte{byte('a' + i%26)}, valueSize)
		switch i % 4 {
		case 0:
			r.Key = []byte(fmt.Sprintf("key-%d", i))
		case 1:
			r.Key = nil
		case 2:
			r.Key = []byte{}
			r.Headers = []RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "", Value: nil}}
		case 3:
			r.Key = []byte("k")
			r.Value = nil
		}
	}
	return recs
}

func fixCRC(b []byte) { binary.BigEndian.PutUint32(b[OffsetCRC:], ComputeCRC(b)) }

func putInt32(b []byte, off int, v int32) { binary.BigEndian.PutUint32(b[off:], uint32(v)) }

// rawBatch wraps the (uncompressed) records section body in a valid header
// announcing count records, compressing body with c.
func rawBatch(t testing.TB, c Compression, count int32, body []byte) []byte {
	t.Helper()
	b := BuildBatch(BuildOptions{FirstTimestamp: 1000}, nil)
	b, err := Compress(c, b, body)
	if err != nil {
		t.Fatal(err)
	}
	putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead))
	putInt32(b, OffsetRecordCount, count)
	putInt32(b, OffsetLastOffsetDelta, count-1)
	binary.BigEndian.PutUint16(b[OffsetAttributes:], uint16(c))
	fixCRC(b)
	return b
}

// rawRecord prefixes a record body with its length.
func rawRecord(body []byte) []byte {
	return append(appendVarint(nil, int32(len(body))), body...)
}

// recordBody encodes attributes 0, timestamp delta 0, the offset delta and
// then the given varints and raw bytes in order.
func recordBody(offsetDelta int32, rest ...any) []byte {
	b := []byte{0}
	b = appendVarlong(b, 0)
	b = appendVarint(b, offsetDelta)
	for _, r := range rest {
		switch v := r.(type) {
		case int:
			b = appendVarint(b, int32(v))
		case []byte:
			b = append(b, v...)
		case string:
			b = append(b, v...)
		}
	}
	return b
}

func TestValidateAcceptsEveryCodec(t *testing.T) {
	recs := sampleRecords(50, 100)
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			opts := BuildOptions{
				BaseOffset:     42,
				Compression:    c,
				FirstTimestamp: 1_700_000_000_000,
				Idempotent:     true,
				ProducerID:     7,
				ProducerEpoch:  3,
				BaseSequence:   100,
				Transactional:  true,
			}
			b := BuildBatch(opts, recs)
			info, err := Validate(b, DefaultValidateOptions())
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			want := Info{
				RecordCount:     50,
				LastOffsetDelta: 49,
				Compression:     c,
				FirstTimestamp:  opts.FirstTimestamp,
				MaxTimestamp:    opts.FirstTimestamp + 49*7 - 3,
				MinTimestamp:    opts.FirstTimestamp - 3,
				ProducerID:      7,
				ProducerEpoch:   3,
				BaseSequence:    100,
				Transactional:   true,
			}
			info.UncompressedBytes = 0
			if info != want {
				t.Fatalf("info = %+v\nwant   %+v", info, want)
			}
			h, err := ParseHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.MaxTimestamp != want.MaxTimestamp || h.BaseOffset != 42 || h.LastOffset() != 42+49 {
				t.Fatalf("header = %+v", h)
			}
			got, err := Records(b, 0)
			if err != nil {
				t.Fatalf("Records: %v", err)
			}
			checkRecords(t, got, recs)
		})
	}
}

// checkRecords compares decoded records with the ones built, numbering
// offsets from 0.
func checkRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.OffsetDelta != int32(i) || g.TimestampDelta != w.TimestampDelta || g.Attributes != w.Attributes {
			t.Fatalf("record %d: deltas %d/%d, want %d/%d", i, g.OffsetDelta, g.TimestampDelta, i, w.TimestampDelta)
		}
		if !sameBytes(g.Key, w.Key) || !sameBytes(g.Value, w.Value) {
			t.Fatalf("record %d: key %q value %q, want %q %q", i, g.Key, g.Value, w.Key, w.Value)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !sameBytes(g.Headers[j].Value, w.Headers[j].Value) {
				t.Fatalf("record %d header %d: %+v, want %+v", i, j, g.Headers[j], w.Headers[j])
			}
		}
	}
}

// sameBytes compares contents and nullness.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestValidateRejects(t *testing.T) {
	valid := func(c Compression) []byte { return BuildBatch(BuildOptions{Compression: c}, sampleRecords(5, 20)) }
	// corruptCompressed overwrites bytes in the middle of the compressed
	// section and fixes the CRC, so only the codec can notice.
	corruptCompressed := func(c Compression) []byte {
		b := valid(c)
		mid := HeaderSize + (len(b)-HeaderSize)/2
		for i := mid; i < mid+4 && i < len(b); i++ {
			b[i] ^= 0x5a
		}
		fixCRC(b)
		return b
	}
	// truncateCompressed cuts the compressed stream short and fixes the
	// length and CRC.
	truncateCompressed := func(c Compression) []byte {
		b := valid(c)
		b = b[:len(b)-6]
		putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead))
		fixCRC(b)
		return b
	}
	patch := func(c Compression, f func(b []byte)) []byte {
		b := valid(c)
		f(b)
		fixCRC(b)
		return b
	}
	okRecord := rawRecord(recordBody(0, -1, 1, "v", 0))

	tests := []struct {
		name  string
		batch []byte
		opts  ValidateOptions
		want  error
	}{
		{"empty", nil, ValidateOptions{}, ErrShortBatch},
		{"header only part", valid(0)[:30], ValidateOptions{}, ErrShortBatch},
		{"truncated", func() []byte { b := valid(0); return b[:len(b)-1] }(), ValidateOptions{}, ErrShortBatch},
		{"trailing garbage", append(valid(0), 0), ValidateOptions{}, ErrCorruptMessage},
		{"two batches", append(valid(0), valid(0)...), ValidateOptions{}, ErrCorruptMessage},
		{"batch length smaller than present", patch(0, func(b []byte) { putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead-3)) }), ValidateOptions{}, ErrCorruptMessage},
		{"batch length larger than present", patch(0, func(b []byte) { putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead+3)) }), ValidateOptions{}, ErrShortBatch},
		{"batch length below minimum", patch(0, func(b []byte) { putInt32(b, OffsetBatchLength, 48) }), ValidateOptions{}, ErrCorruptMessage},
		{"batch length negative", patch(0, func(b []byte) { putInt32(b, OffsetBatchLength, -1) }), ValidateOptions{}, ErrCorruptMessage},
		{"magic 1", patch(0, func(b []byte) { b[OffsetMagic] = 1 }), ValidateOptions{}, ErrUnsupportedVersion},
		{"magic 3", patch(0, func(b []byte) { b[OffsetMagic] = 3 }), ValidateOptions{}, ErrUnsupportedVersion},
		{"crc mismatch", func() []byte { b := valid(0); b[len(b)-2] ^= 1; return b }(), ValidateOptions{}, ErrCorruptMessage},
		{"crc mismatch in header", func() []byte { b := valid(0); b[OffsetProducerID+7] ^= 1; return b }(), ValidateOptions{}, ErrCorruptMessage},
		{"record count 0", patch(0, func(b []byte) { putInt32(b, OffsetRecordCount, 0); putInt32(b, OffsetLastOffsetDelta, -1) }), ValidateOptions{}, ErrInvalidRecord},
		{"record count negative", patch(0, func(b []byte) { putInt32(b, OffsetRecordCount, -2); putInt32(b, OffsetLastOffsetDelta, -3) }), ValidateOptions{}, ErrCorruptMessage},
		{"record count larger than present", patch(0, func(b []byte) { putInt32(b, OffsetRecordCount, 6); putInt32(b, OffsetLastOffsetDelta, 5) }), ValidateOptions{}, ErrCorruptMessage},
		{"record count larger than present zstd", patch(CompressionZstd, func(b []byte) { putInt32(b, OffsetRecordCount, 6); putInt32(b, OffsetLastOffsetDelta, 5) }), ValidateOptions{}, ErrCorruptMessage},
		{"record count smaller than present", patch(0, func(b []byte) { putInt32(b, OffsetRecordCount, 4); putInt32(b, OffsetLastOffsetDelta, 3) }), ValidateOptions{}, ErrCorruptMessage},
		{"record count smaller than present gzip", patch(CompressionGzip, func(b []byte) { putInt32(b, OffsetRecordCount, 4); putInt32(b, OffsetLastOffsetDelta, 3) }), ValidateOptions{}, ErrCorruptMessage},
		{"last offset delta mismatch", patch(0, func(b []byte) { putInt32(b, OffsetLastOffsetDelta, 7) }), ValidateOptions{}, ErrInvalidRecord},
		{"codec 5", patch(0, func(b []byte) { b[OffsetAttributes+1] |= 5 }), ValidateOptions{}, ErrUnsupportedCompression},
		{"codec 6", patch(0, func(b []byte) { b[OffsetAttributes+1] |= 6 }), ValidateOptions{}, ErrUnsupportedCompression},
		{"codec 7", patch(0, func(b []byte) { b[OffsetAttributes+1] |= 7 }), ValidateOptions{}, ErrUnsupportedCompression},
		{"log append time from producer", patch(0, func(b []byte) { b[OffsetAttributes+1] |= AttrTimestampLogAppend }), ValidateOptions{}, ErrInvalidRecord},
		{"control batch from client", patch(0, func(b []byte) { b[OffsetAttributes+1] |= AttrControl }), ValidateOptions{}, ErrInvalidRecord},
		{"producer id without sequence", BuildBatch(BuildOptions{Idempotent: true, ProducerID: 5, BaseSequence: -1}, sampleRecords(2, 1)), ValidateOptions{}, ErrInvalidRecord},
		{"corrupt gzip", corruptCompressed(CompressionGzip), ValidateOptions{}, ErrCorruptMessage},
		{"corrupt zstd", corruptCompressed(CompressionZstd), ValidateOptions{}, ErrCorruptMessage},
		{"corrupt lz4", corruptCompressed(CompressionLZ4), ValidateOptions{}, ErrCorruptMessage},
		{"corrupt snappy", corruptCompressed(CompressionSnappy), ValidateOptions{}, ErrCorruptMessage},
		{"truncated gzip", truncateCompressed(CompressionGzip), ValidateOptions{}, ErrCorruptMessage},
		{"truncated zstd", truncateCompressed(CompressionZstd), ValidateOptions{}, ErrCorruptMessage},
		{"truncated lz4", truncateCompressed(CompressionLZ4), ValidateOptions{}, ErrCorruptMessage},
		{"truncated snappy", truncateCompressed(CompressionSnappy), ValidateOptions{}, ErrCorruptMessage},
		{"garbage as gzip", rawBatch(t, 0, 1, []byte("not gzip at all")), ValidateOptions{}, ErrCorruptMessage},
		{"null key with RequireKeys", valid(0), ValidateOptions{RequireKeys: true}, ErrInvalidRecord},
		{"null key with RequireKeys lz4", valid(CompressionLZ4), ValidateOptions{RequireKeys: true}, ErrInvalidRecord},

		// Hand-made records sections.
		{"negative record length", rawBatch(t, 0, 1, append(appendVarint(nil, -5), recordBody(0, -1, -1, 0)...)), ValidateOptions{}, ErrCorruptMessage},
		{"zero record length", rawBatch(t, 0, 1, append(appendVarint(nil, 0), recordBody(0, -1, -1, 0)...)), ValidateOptions{}, ErrCorruptMessage},
		{"record length beyond end", rawBatch(t, 0, 1, append(appendVarint(nil, 100), recordBody(0, -1, -1, 0)...)), ValidateOptions{}, ErrCorruptMessage},
		{"record length varint too long", rawBatch(t, 0, 1, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), ValidateOptions{}, ErrCorruptMessage},
		{"record length varint overflows", rawBatch(t, 0, 1, []byte{0xff, 0xff, 0xff, 0xff, 0x7f}), ValidateOptions{}, ErrCorruptMessage},
		{"key length beyond end", rawBatch(t, 0, 1, rawRecord(recordBody(0, 900, "abcdefghijkl"))), ValidateOptions{}, ErrCorruptMessage},
		{"key length -2", rawBatch(t, 0, 1, rawRecord(recordBody(0, -2, -1, 0))), ValidateOptions{}, ErrCorruptMessage},
		{"value length beyond end", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, 50, "abc"))), ValidateOptions{}, ErrCorruptMessage},
		{"value length -3", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -3, 0))), ValidateOptions{}, ErrCorruptMessage},
		{"header count negative", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, -3))), ValidateOptions{}, ErrCorruptMessage},
		{"header count beyond end", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, 1000, 1, "k", 1, "v"))), ValidateOptions{}, ErrCorruptMessage},
		{"header key null", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, 1, -1, 1, "v"))), ValidateOptions{}, ErrCorruptMessage},
		{"header key beyond end", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, 1, 10, "k"))), ValidateOptions{}, ErrCorruptMessage},
		{"header value beyond end", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, 1, 1, "k", 10, "v"))), ValidateOptions{}, ErrCorruptMessage},
		{"record ends before its length", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1, 0, "xx"))), ValidateOptions{}, ErrCorruptMessage},
		{"record body cut inside header", rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, -1))), ValidateOptions{}, ErrCorruptMessage},
		{"offset delta not consecutive", rawBatch(t, 0, 2, append(append([]byte{}, okRecord...), rawRecord(recordBody(2, -1, 1, "v", 0))...)), ValidateOptions{}, ErrInvalidRecord},
		{"offset delta not from zero", rawBatch(t, 0, 1, rawRecord(recordBody(1, -1, 1, "v", 0))), ValidateOptions{}, ErrInvalidRecord},
		{"timestamp varlong too long", rawBatch(t, 0, 1, rawRecord([]byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 1, 1, 0})), ValidateOptions{}, ErrCorruptMessage},
		{"trailing bytes in records", rawBatch(t, 0, 1, append(append([]byte{}, okRecord...), 0)), ValidateOptions{}, ErrCorruptMessage},
		{"hand-made records in zstd with bad key", rawBatch(t, CompressionZstd, 1, rawRecord(recordBody(0, 900, "abc"))), ValidateOptions{}, ErrCorruptMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Validate(tt.batch, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Validate error = %v, want %v", err, tt.want)
			}
			// Records must never accept what Validate finds structurally
			// broken (it skips the CRC and producer rules, so only check
			// corruption of the records themselves).
			if errors.Is(err, ErrCorruptMessage) && !strings.Contains(err.Error(), "CRC") {
				if _, rerr := Records(tt.batch, 0); rerr == nil {
					t.Fatalf("Records accepted a batch Validate rejects with %v", err)
				}
			}
		})
	}
}

func TestValidateOkRecordHelpers(t *testing.T) {
	// The hand-made record used above must itself be valid, or the negative
	// cases prove nothing.
	b := rawBatch(t, 0, 1, rawRecord(recordBody(0, -1, 1, "v", 1, 1, "k", -1)))
	if _, err := Validate(b, ValidateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range allCodecs {
		b := rawBatch(t, c, 2, append(rawRecord(recordBody(0, 1, "k", -1, 0)), rawRecord(recordBody(1, 2, "kk", 1, "v", 0))...))
		if _, err := Validate(b, ValidateOptions{RequireKeys: true}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
}

func TestValidateOptionsAllow(t *testing.T) {
	replica := ValidateOptions{AllowControl: true, AllowLogAppendTime: true, AllowOffsetGaps: true}

	control := BuildBatch(BuildOptions{Control: true, ProducerID: 9, ProducerEpoch: 1, BaseSequence: -1}, []Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}})
	if _, err := Validate(control, ValidateOptions{AllowControl: true}); err != nil {
		t.Fatalf("control batch with AllowControl: %v", err)
	}
	info, err := Validate(control, replica)
	if err != nil || !info.Control {
		t.Fatalf("control batch as replica: %+v, %v", info, err)
	}

	gaps := BuildBatch(BuildOptions{KeepOffsetDeltas: true, Compression: CompressionLZ4}, []Record{{OffsetDelta: 2, Key: []byte("a")}, {OffsetDelta: 5, Key: []byte("b")}})
	if h, _ := ParseHeader(gaps); h.LastOffsetDelta != 5 || h.RecordCount != 2 {
		t.Fatalf("gapped header = %+v", h)
	}
	if _, err := Validate(gaps, ValidateOptions{}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("gapped batch from a client: %v", err)
	}
	if _, err := Validate(gaps, replica); err != nil {
		t.Fatalf("gapped batch as replica: %v", err)
	}
	recs, err := Records(gaps, 0)
	if err != nil || len(recs) != 2 || recs[1].OffsetDelta != 5 {
		t.Fatalf("Records of gapped batch: %+v, %v", recs, err)
	}
	backwards := BuildBatch(BuildOptions{KeepOffsetDeltas: true}, []Record{{OffsetDelta: 3}, {OffsetDelta: 3}})
	if _, err := Validate(backwards, replica); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("repeated offset delta as replica: %v", err)
	}

	empty := BuildBatch(BuildOptions{}, nil)
	if _, err := Validate(empty, ValidateOptions{}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("empty batch from a client: %v", err)
	}
	info, err = Validate(empty, replica)
	if err != nil || info.RecordCount != 0 || info.MaxTimestamp != -1 {
		t.Fatalf("empty batch as replica: %+v, %v", info, err)
	}
}

func TestSetLogAppendTime(t *testing.T) {
	for _, c := range allCodecs {
		b := BuildBatch(BuildOptions{Compression: c, FirstTimestamp: 5000}, sampleRecords(3, 10))
		SetLogAppendTime(b, 123456)
		h, _ := ParseHeader(b)
		if h.Attributes&AttrTimestampLogAppend == 0 || h.MaxTimestamp != 123456 || h.FirstTimestamp != 5000 || h.Compression() != c {
			t.Fatalf("%s: header after SetLogAppendTime = %+v", c, h)
		}
		if h.CRC != ComputeCRC(b) {
			t.Fatalf("%s: CRC not recomputed", c)
		}
		info, err := Validate(b, ValidateOptions{AllowLogAppendTime: true})
		if err != nil || !info.LogAppendTime || info.MaxTimestamp != 123456 || info.MinTimestamp != 123456 {
			t.Fatalf("%s: Validate after SetLogAppendTime: %+v, %v", c, info, err)
		}
		if _, err := Validate(b, ValidateOptions{}); !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("%s: LogAppendTime batch as from a producer: %v", c, err)
		}
	}
}

func TestValidateDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumentation allocates")
	}
	b := BuildBatch(BuildOptions{}, sampleRecords(100, 100))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Validate(b, ValidateOptions{RequireKeys: false}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Validate of an uncompressed batch allocates %v times", allocs)
	}
}

func TestSnappyFramings(t *testing.T) {
	recs := sampleRecords(40, 300)
	body := BuildBatch(BuildOptions{}, recs)[HeaderSize:]

	var framed bytes.Buffer
	w := snappy.NewBufferedWriter(&framed)
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// xerial framing as the Java client writes it, in chunks of 32 KiB; make
	// the body large enough to need several.
	bigRecs := sampleRecords(400, 300)
	bigBody := BuildBatch(BuildOptions{}, bigRecs)[HeaderSize:]

	for _, tc := range []struct {
		name string
		recs []Record
		data []byte
	}{
		{"raw block", recs, snappy.Encode(nil, body)},
		{"xerial", recs, xerial.Encode(nil, body)},
		{"xerial multi-chunk", bigRecs, xerial.Encode(nil, bigBody)},
		{"snappy stream format", recs, framed.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := BuildBatch(BuildOptions{}, nil)
			b = append(b, tc.data...)
			putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead))
			putInt32(b, OffsetRecordCount, int32(len(tc.recs)))
			putInt32(b, OffsetLastOffsetDelta, int32(len(tc.recs)-1))
			binary.BigEndian.PutUint16(b[OffsetAttributes:], uint16(CompressionSnappy))
			fixCRC(b)
			if _, err := Validate(b, ValidateOptions{}); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := Records(b, 0)
			if err != nil {
				t.Fatalf("Records: %v", err)
			}
			checkRecords(t, got, tc.recs)

			// A limit below the size must refuse it.
			if _, err := Validate(b, ValidateOptions{MaxUncompressedBytes: 1000}); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Validate with small limit: %v", err)
			}
		})
	}

	for _, bad := range [][]byte{
		xerialMagic, // header cut short
		append(append([]byte{}, xerial.Encode(nil, body)...), 0, 0),               // chunk length cut short
		append(append([]byte{}, xerial.Encode(nil, body)[:16]...), 0, 0, 1, 0, 1), // chunk beyond end
	} {
		if _, err := Decompress(CompressionSnappy, bad, 1<<20); !errors.Is(err, ErrCorruptMessage) {
			t.Fatalf("Decompress(% x...) = %v, want corrupt", bad[:min(len(bad), 20)], err)
		}
	}
}

func TestCompressDecompressRoundTrip(t *testing.T) {
	src := bytes.Repeat([]byte("silkworm record batch "), 5000)
	for _, c := range allCodecs {
		prefix := []byte("prefix")
		out, err := Compress(c, append([]byte{}, prefix...), src)
		if err != nil {
			t.Fatalf("%s: Compress: %v", c, err)
		}
		if !bytes.HasPrefix(out, prefix) {
			t.Fatalf("%s: Compress did not append", c)
		}
		got, err := Decompress(c, out[len(prefix):], len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%s: Decompress: %d bytes, %v", c, len(got), err)
		}
		if _, err := Decompress(c, out[len(prefix):], len(src)-1); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: Decompress one byte under the size: %v", c, err)
		}
		empty, err := Compress(c, nil, nil)
		if err != nil {
			t.Fatalf("%s: Compress(empty): %v", c, err)
		}
		if got, err := Decompress(c, empty, 10); err != nil || len(got) != 0 {
			t.Fatalf("%s: Decompress(empty): %q, %v", c, got, err)
		}
	}
	for _, limit := range []int{-1, 0, math.MaxInt} {
		out, _ := Compress(CompressionLZ4, nil, src)
		got, err := Decompress(CompressionLZ4, out, limit)
		if limit > 0 && (err != nil || !bytes.Equal(got, src)) {
			t.Fatalf("Decompress with limit %d: %v", limit, err)
		}
		if limit <= 0 && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Decompress with limit %d: %v", limit, err)
		}
	}
	if _, err := Compress(5, nil, src); !errors.Is(err, ErrUnsupportedCompression) {
		t.Fatalf("Compress(5): %v", err)
	}
	if _, err := Decompress(7, src, 1<<20); !errors.Is(err, ErrUnsupportedCompression) {
		t.Fatalf("Decompress(7): %v", err)
	}
}

// zeroBomb streams n zero bytes through a compressor without holding them.
func zeroBomb(t *testing.T, c Compression, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	switch c {
	case CompressionZstd:
		zw, err := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	case CompressionLZ4:
		w = lz4.NewWriter(&out)
	case CompressionGzip:
		gw, err := gzip.NewWriterLevel(&out, gzip.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		w = gw
	case CompressionSnappy:
		// xerial chunks are compressed independently; build them directly.
		chunk := snappy.Encode(nil, make([]byte, 1<<20))
		out.Write(xerialMagic)
		out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for range n >> 20 {
			binary.Write(&out, binary.BigEndian, uint32(len(chunk)))
			out.Write(chunk)
		}
		return out.Bytes()
	default:
		t.Fatalf("no bomb for %s", c)
	}
	zeros := make([]byte, 1<<20)
	for range n >> 20 {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestDecompressionBombRefused(t *testing.T) {
	const limit = 8 << 20
	sizes := map[Compression]int{CompressionZstd: 1 << 30, CompressionLZ4: 256 << 20, CompressionSnappy: 64 << 20, CompressionGzip: 64 << 20}
	if raceEnabled || testing.Short() {
		sizes = map[Compression]int{CompressionZstd: 128 << 20, CompressionLZ4: 64 << 20, CompressionSnappy: 32 << 20, CompressionGzip: 32 << 20}
	}
	for _, c := range []Compression{CompressionZstd, CompressionLZ4, CompressionSnappy, CompressionGzip} {
		t.Run(c.String(), func(t *testing.T) {
			bomb := zeroBomb(t, c, sizes[c])
			b := BuildBatch(BuildOptions{}, nil)
			b = append(b, bomb...)
			putInt32(b, OffsetBatchLength, int32(len(b)-LogOverhead))
			putInt32(b, OffsetRecordCount, 1)
			putInt32(b, OffsetLastOffsetDelta, 0)
			binary.BigEndian.PutUint16(b[OffsetAttributes:], uint16(c))
			fixCRC(b)
			t.Logf("%d MiB of zeros as a %d KiB %s batch", sizes[c]>>20, len(b)>>10, c)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Validate(b, ValidateOptions{MaxUncompressedBytes: limit})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Validate = %v, want ErrTooLarge", err)
			}
			// The buffer grows to about the limit and the zstd window is at
			// most maxZstdWindow; allow slack for the decoders themselves.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit+maxZstdWindow {
				t.Fatalf("refusing the bomb allocated %d MiB", alloc>>20)
			}
			if _, err := Records(b, limit); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Records = %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestZstdWindowTooLargeRefused(t *testing.T) {
	// A frame that declares a 128 MiB window must be refused before the
	// decoder allocates it. Hand-made: magic, descriptor without content
	// size, window byte (exponent 17: 2^27), one last raw block of 1 byte.
	frame := func(windowByte byte) []byte {
		return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, windowByte, 0x09, 0x00, 0x00, 'x'}
	}
	if got, err := Decompress(CompressionZstd, frame(1<<3), 100); err != nil || string(got) != "x" {
		t.Fatalf("Decompress with a 2 KiB window: %q, %v", got, err)
	}
	if _, err := Decompress(CompressionZstd, frame(17<<3), 1<<30); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("Decompress with a 128 MiB window: %v", err)
	}
}

func TestVarints(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 63, -64, 64, -65, 1 << 20, -(1 << 20), 1<<31 - 1, -1 << 31} {
		b := appendVarint(nil, v)
		if len(b) != varintLen(v) {
			t.Fatalf("varintLen(%d) = %d, encoded %d bytes", v, varintLen(v), len(b))
		}
		got, n := readVarint(b, 0)
		if got != v || n != len(b) {
			t.Fatalf("readVarint(% x) = %d, %d; want %d, %d", b, got, n, v, len(b))
		}
		if sv, sn := binary.Varint(b); sv != int64(v) || sn != len(b) {
			t.Fatalf("stdlib disagrees on %d: %d, %d", v, sv, sn)
		}
	}
	for _, v := range []int64{0, -1, 1 << 40, -1 << 63, 1<<63 - 1} {
		b := appendVarlong(nil, v)
		got, n := readVarlong(b, 0)
		if got != v || n != len(b) {
			t.Fatalf("readVarlong(% x) = %d, %d; want %d", b, got, n, v)
		}
	}
	for _, bad := range [][]byte{{}, {0x80}, {0xff, 0xff, 0xff, 0xff, 0x1f}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}} {
		if _, n := readVarint(bad, 0); n != -1 {
			t.Fatalf("readVarint(% x) accepted", bad)
		}
	}
	if _, n := readVarlong([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 0); n != -1 {
		t.Fatal("readVarlong accepted a 65-bit value")
	}
}

func TestValidateNamesEveryKeylessRecord(t *testing.T) {
	// Records 0 and 2 have no key, 1 and 3 have one.
	recs := append(append(rawRecord(recordBody(0, -1, 1, "v", 0)), rawRecord(recordBody(1, 1, "k", 1, "v", 0))...),
		append(rawRecord(recordBody(2, -1, 1, "v", 0)), rawRecord(recordBody(3, 1, "k", -1, 0))...)...)
	for _, c := range allCodecs {
		b := rawBatch(t, c, 4, recs)
		_, err := Validate(b, ValidateOptions{RequireKeys: true})
		var ire *InvalidRecordsError
		if !errors.As(err, &ire) || !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("%s: Validate error = %v, want an *InvalidRecordsError wrapping ErrInvalidRecord", c, err)
		}
		if !slices.Equal(ire.NullKeys, []int32{0, 2}) {
			t.Fatalf("%s: null keys at %v, want [0 2]", c, ire.NullKeys)
		}
		if _, err := Validate(b, ValidateOptions{}); err != nil {
			t.Fatalf("%s: without RequireKeys: %v", c, err)
		}
	}
	// Corruption after a keyless record wins, as in Kafka's iteration.
	bad := rawBatch(t, 0, 2, append(rawRecord(recordBody(0, -1, 1, "v", 0)), rawRecord(recordBody(1, -2, -1, 0))...))
	if _, err := Validate(bad, ValidateOptions{RequireKeys: true}); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("keyless then corrupt: %v, want ErrCorruptMessage", err)
	}
}
