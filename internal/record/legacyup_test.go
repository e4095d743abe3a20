package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// upMessages returns n legacy messages mixing null and empty keys and
// values, with offsets 0..n-1 and increasing timestamps from ts.
func upMessages(n int, ts int64) []LegacyMessage {
	msgs := make([]LegacyMessage, n)
	for i := range msgs {
		m := &msgs[i]
		m.Offset = int64(i)
		m.Timestamp = ts + int64(i*10)
		switch i % 4 {
		case 0:
			m.Key, m.Value = fmt.Appendf(nil, "key-%d", i), fmt.Appendf(nil, "value-%d-%s", i, bytes.Repeat([]byte("x"), i))
		case 1:
			m.Key, m.Value = nil, fmt.Appendf(nil, "keyless-%d", i)
		case 2:
			m.Key, m.Value = []byte{}, nil // empty key, null value (a tombstone)
		case 3:
			m.Key, m.Value = []byte("k"), []byte{}
		}
	}
	return msgs
}

// upCheckBatch validates the converted batch as a produced v2 batch and
// checks that its records are msgs with the expected timestamps.
func upCheckBatch(t *testing.T, batch []byte, msgs []LegacyMessage, wantTS func(i int) int64, wantCodec Compression) {
	t.Helper()
	info, err := Validate(batch, DefaultValidateOptions())
	if err != nil {
		t.Fatalf("converted batch does not validate: %v", err)
	}
	if info.Compression != wantCodec {
		t.Fatalf("codec %v, want %v", info.Compression, wantCodec)
	}
	if info.ProducerID != -1 || info.ProducerEpoch != -1 || info.BaseSequence != -1 || info.Transactional || info.Control || info.LogAppendTime {
		t.Fatalf("batch is not a plain producer's CreateTime batch: %+v", info)
	}
	h, err := ParseHeader(batch)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 0 || h.PartitionLeaderEpoch != -1 {
		t.Fatalf("base offset %d, leader epoch %d", h.BaseOffset, h.PartitionLeaderEpoch)
	}
	recs, err := Records(batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(msgs) {
		t.Fatalf("%d records, want %d", len(recs), len(msgs))
	}
	maxTS := int64(-1)
	for i, r := range recs {
		m := msgs[i]
		if !upSameBytes(r.Key, m.Key) || !upSameBytes(r.Value, m.Value) {
			t.Fatalf("record %d: key %q value %q, want key %q value %q (nil = null)", i, r.Key, r.Value, m.Key, m.Value)
		}
		if len(r.Headers) != 0 || r.OffsetDelta != int32(i) {
			t.Fatalf("record %d: headers %v, offset delta %d", i, r.Headers, r.OffsetDelta)
		}
		if got, want := h.FirstTimestamp+r.TimestampDelta, wantTS(i); got != want {
			t.Fatalf("record %d: timestamp %d, want %d", i, got, want)
		}
		maxTS = max(maxTS, wantTS(i))
	}
	if h.MaxTimestamp != maxTS {
		t.Fatalf("max timestamp %d, want %d", h.MaxTimestamp, maxTS)
	}
}

// upSameBytes compares two byte slices telling null (nil) from empty.
func upSameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestUpConvertRoundTrip(t *testing.T) {
	const ts = 1_700_000_000_000
	type codecCase struct {
		name   string
		c      Compression
		xerial bool
	}
	codecs := []codecCase{
		{"none", CompressionNone, false},
		{"gzip", CompressionGzip, false},
		{"snappy-raw", CompressionSnappy, false},
		{"snappy-xerial", CompressionSnappy, true},
		{"lz4", CompressionLZ4, false},
	}
	for _, magic := range []int8{MagicV0, MagicV1} {
		for _, cc := range codecs {
			for _, n := range []int{1, 7} {
				msgs := upMessages(n, ts)
				set := BuildMessageSet(MessageSetOptions{Magic: magic, Compression: cc.c, XerialSnappy: cc.xerial}, msgs)
				wantTS := func(i int) int64 {
					if magic == MagicV0 {
						return -1
					}
					return msgs[i].Timestamp
				}
				t.Run(fmt.Sprintf("v%d/%s/%d/producer", magic, cc.name, n), func(t *testing.T) {
					prefix := []byte("prefix")
					out, res, err := UpConvert(prefix, set, UpConvertOptions{KeepCompression: true})
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out[:len(prefix)], []byte("prefix")) {
						t.Fatalf("dst prefix overwritten: %q", out[:len(prefix)])
					}
					upCheckBatch(t, out[len(prefix):], msgs, wantTS, cc.c)
					if res.Magic != magic || res.Records != n || res.SourceCompression != cc.c || res.Compression != cc.c || res.MaxTimestamp != wantTS(n-1) {
						t.Fatalf("result %+v", res)
					}
				})
				for _, target := range []Compression{CompressionNone, CompressionZstd, CompressionGzip} {
					t.Run(fmt.Sprintf("v%d/%s/%d/to-%s", magic, cc.name, n, target), func(t *testing.T) {
						out, res, err := UpConvert(nil, set, UpConvertOptions{Compression: target})
						if err != nil {
							t.Fatal(err)
						}
						upCheckBatch(t, out, msgs, wantTS, target)
						if res.Compression != target || res.SourceCompression != cc.c {
							t.Fatalf("result %+v", res)
						}
					})
				}
			}
		}
	}
}

func TestUpConvertTimestamps(t *testing.T) {
	const now = 1_700_000_000_000
	msgs := []LegacyMessage{{Timestamp: now - 5, Value: []byte("a")}, {Offset: 1, Timestamp: now + 7, Value: []byte("b")}, {Offset: 2, Timestamp: -1, Value: []byte("c")}}
	ptr := func(v int64) *int64 { return &v }
	window := UpConvertOptions{Now: now, TimestampBeforeMaxMs: 10, TimestampAfterMaxMs: 10}

	t.Run("magic 1 keeps the producer's timestamps, -1 included", func(t *testing.T) {
		for _, c := range []Compression{CompressionNone, CompressionGzip} {
			out, res, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: c}, msgs), window)
			if err != nil {
				t.Fatal(err)
			}
			upCheckBatch(t, out, msgs, func(i int) int64 { return msgs[i].Timestamp }, CompressionNone)
			if res.MaxTimestamp != now+7 {
				t.Fatalf("max timestamp %d", res.MaxTimestamp)
			}
		}
	})
	t.Run("timestamp window", func(t *testing.T) {
		for _, c := range []Compression{CompressionNone, CompressionSnappy} {
			late := UpConvertOptions{Now: now, TimestampBeforeMaxMs: 4, TimestampAfterMaxMs: 10}
			if _, _, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: c}, msgs), late); !errors.Is(err, ErrInvalidTimestamp) {
				t.Fatalf("%v: 5 ms old with before.max 4: %v, want ErrInvalidTimestamp", c, err)
			}
			early := UpConvertOptions{Now: now, TimestampBeforeMaxMs: 10, TimestampAfterMaxMs: 6}
			if _, _, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: c}, msgs), early); !errors.Is(err, ErrInvalidTimestamp) {
				t.Fatalf("%v: 7 ms ahead with after.max 6: %v, want ErrInvalidTimestamp", c, err)
			}
			// Magic 0 has no timestamps to check; a LogAppendTime topic
			// does not check them either.
			if _, _, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV0, Compression: c}, msgs), late); err != nil {
				t.Fatalf("%v: magic 0 under a window: %v", c, err)
			}
			lat := late
			lat.LogAppendTime = true
			if _, _, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: c}, msgs), lat); err != nil {
				t.Fatalf("%v: LogAppendTime topic: %v", c, err)
			}
		}
	})
	t.Run("LogAppendTime wrapper gives its timestamp to inner messages", func(t *testing.T) {
		set := BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionGzip, WrapperLogAppendTime: true, WrapperTimestamp: ptr(now + 1)}, msgs)
		out, _, err := UpConvert(nil, set, window)
		if err != nil {
			t.Fatal(err)
		}
		upCheckBatch(t, out, msgs, func(int) int64 { return now + 1 }, CompressionNone)
		// Kafka refuses it on a LogAppendTime topic.
		if _, _, err := UpConvert(nil, set, UpConvertOptions{LogAppendTime: true}); !errors.Is(err, ErrInvalidTimestamp) {
			t.Fatalf("LogAppendTime wrapper on a LogAppendTime topic: %v, want ErrInvalidTimestamp", err)
		}
	})
	t.Run("LogAppendTime message", func(t *testing.T) {
		one := []LegacyMessage{{Timestamp: now, Value: []byte("v"), LogAppendTime: true}}
		set := BuildMessageSet(MessageSetOptions{Magic: MagicV1}, one)
		if _, _, err := UpConvert(nil, set, UpConvertOptions{}); err != nil {
			t.Fatalf("on a CreateTime topic Kafka takes its timestamp: %v", err)
		}
		if _, _, err := UpConvert(nil, set, UpConvertOptions{LogAppendTime: true}); !errors.Is(err, ErrInvalidTimestamp) {
			t.Fatalf("on a LogAppendTime topic: %v, want ErrInvalidTimestamp", err)
		}
		one[0].Timestamp = -1
		if _, _, err := UpConvert(nil, BuildMessageSet(MessageSetOptions{Magic: MagicV1}, one), UpConvertOptions{}); !errors.Is(err, ErrInvalidTimestamp) {
			t.Fatalf("LogAppendTime without a timestamp: %v, want ErrInvalidTimestamp", err)
		}
	})
}

// upEntries splits a message set into its entries (which share its bytes).
func upEntries(t *testing.T, set []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for pos := 0; pos < len(set); {
		n := LogOverhead + int(binary.BigEndian.Uint32(set[pos+LegacyOffsetSize:]))
		out = append(out, set[pos:pos+n])
		pos += n
	}
	return out
}

// upFixCRC recomputes the CRC of every entry of set.
func upFixCRC(t *testing.T, set []byte) []byte {
	for _, e := range upEntries(t, set) {
		binary.BigEndian.PutUint32(e[LegacyOffsetCRC:], crc32.ChecksumIEEE(e[LegacyOffsetMagic:]))
	}
	return set
}

// upWrap wraps inner (a message set) in a wrapper of the given magic and
// codec, with a valid CRC.
func upWrap(t *testing.T, magic int8, c Compression, offset int64, inner []byte) []byte {
	t.Helper()
	value, err := Compress(c, nil, inner)
	if err != nil {
		t.Fatal(err)
	}
	return legacyUpAppendMessage(nil, magic, byte(c), offset, 0, nil, value)
}

func TestUpConvertErrors(t *testing.T) {
	plain := func(magic int8) []byte {
		return BuildMessageSet(MessageSetOptions{Magic: magic}, upMessages(3, 1000))
	}
	v1 := func(c Compression) []byte {
		return BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: c}, upMessages(3, 1000))
	}
	ptr := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		set  []byte
		opts UpConvertOptions
		want error
	}{
		{"empty", nil, UpConvertOptions{}, ErrInvalidRecord},
		{"crc mismatch", func() []byte { b := plain(MagicV0); b[len(b)-1] ^= 1; return b }(), UpConvertOptions{}, ErrCorruptMessage},
		{"crc mismatch in a wrapper", func() []byte { b := v1(CompressionGzip); b[LegacyOffsetCRC] ^= 1; return b }(), UpConvertOptions{}, ErrCorruptMessage},
		{"size below the v0 overhead", func() []byte {
			b := plain(MagicV0)
			binary.BigEndian.PutUint32(b[LegacyOffsetSize:], 13)
			return b
		}(), UpConvertOptions{}, ErrCorruptMessage},
		{"magic 1 shorter than its overhead", upFixCRC(t, func() []byte {
			b := legacyUpAppendMessage(nil, MagicV0, 0, 0, 0, nil, nil) // 26 bytes
			b[LegacyOffsetMagic] = MagicV1
			return b
		}()), UpConvertOptions{}, ErrCorruptMessage},
		{"truncated entry", func() []byte { b := plain(MagicV1); return b[:len(b)-3] }(), UpConvertOptions{}, ErrCorruptMessage},
		{"truncated entry header", append(plain(MagicV1), 0, 0, 0), UpConvertOptions{}, ErrCorruptMessage},
		{"magic 3", func() []byte { b := plain(MagicV0); b[LegacyOffsetMagic] = 3; return upFixCRC(t, b) }(), UpConvertOptions{}, ErrCorruptMessage},
		{"mixed magics", append(plain(MagicV0), plain(MagicV1)...), UpConvertOptions{}, ErrInvalidRecord},
		{"v2 batch after a legacy message", append(plain(MagicV1), BuildBatch(BuildOptions{}, sampleRecords(1, 1))...), UpConvertOptions{}, ErrInvalidRecord},
		{"two wrappers", append(v1(CompressionGzip), v1(CompressionGzip)...), UpConvertOptions{}, ErrInvalidRecord},
		{"wrapper after plain messages", append(plain(MagicV1), v1(CompressionLZ4)...), UpConvertOptions{}, ErrInvalidRecord},
		{"zstd wrapper", v1(CompressionZstd), UpConvertOptions{KeepCompression: true}, ErrInvalidRecord},
		{"zstd wrapper, topic codec lz4", BuildMessageSet(MessageSetOptions{Magic: MagicV0, Compression: CompressionZstd}, upMessages(2, 0)), UpConvertOptions{Compression: CompressionLZ4}, ErrInvalidRecord},
		{"codec 5", func() []byte { b := plain(MagicV1); b[LegacyOffsetAttributes] = 5; return upFixCRC(t, b) }(), UpConvertOptions{}, ErrUnsupportedCompression},
		{"codec 7 on a later message", func() []byte {
			b := plain(MagicV0)
			e := upEntries(t, b)[2]
			e[LegacyOffsetAttributes] = 7
			return upFixCRC(t, b)
		}(), UpConvertOptions{}, ErrUnsupportedCompression},
		{"nested compression", upWrap(t, MagicV1, CompressionGzip, 0, v1(CompressionSnappy)), UpConvertOptions{}, ErrInvalidRecord},
		{"inner magic differs from the wrapper's", upWrap(t, MagicV1, CompressionGzip, 2, plain(MagicV0)), UpConvertOptions{}, ErrInvalidRecord},
		{"inner crc mismatch", upWrap(t, MagicV0, CompressionSnappy, 2, func() []byte { b := plain(MagicV0); b[len(b)-1] ^= 1; return b }()), UpConvertOptions{}, ErrCorruptMessage},
		{"inner message truncated", upWrap(t, MagicV0, CompressionGzip, 2, func() []byte { b := plain(MagicV0); return b[:len(b)-1] }()), UpConvertOptions{}, ErrCorruptMessage},
		{"inner size below the overhead", upWrap(t, MagicV0, CompressionGzip, 0, make([]byte, 20)), UpConvertOptions{}, ErrCorruptMessage},
		{"wrapper with no inner messages", upWrap(t, MagicV1, CompressionGzip, 0, nil), UpConvertOptions{}, ErrInvalidRecord},
		{"wrapper with a null value", legacyUpAppendMessage(nil, MagicV1, byte(CompressionGzip), 0, 0, nil, nil), UpConvertOptions{}, ErrInvalidRecord},
		{"corrupt gzip value", legacyUpAppendMessage(nil, MagicV0, byte(CompressionGzip), 0, 0, nil, []byte("not gzip at all")), UpConvertOptions{}, ErrCorruptMessage},
		{"corrupt lz4 value", legacyUpAppendMessage(nil, MagicV0, byte(CompressionLZ4), 0, 0, nil, []byte("not lz4 at all")), UpConvertOptions{}, ErrCorruptMessage},
		{"magic 1 lz4 header checksum wrong", func() []byte {
			msgs := upMessages(2, 0)
			v := BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionLZ4}, msgs)
			w := upEntries(t, v)[0]
			w[LegacyHeaderSizeV1+8+6] ^= 0xff // key -1, value length, then the frame's HC
			return upFixCRC(t, v)
		}(), UpConvertOptions{}, ErrCorruptMessage},
		{"magic 1 wrapper offset below the last inner offset", BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionGzip, WrapperOffset: ptr(1)}, upMessages(3, 0)), UpConvertOptions{}, ErrInvalidRecord},
		{"bytes after the value", upFixCRC(t, func() []byte {
			b := legacyUpAppendMessage(nil, MagicV0, 0, 0, 0, []byte("k"), []byte("v"))
			b = append(b, 0xee)
			binary.BigEndian.PutUint32(b[LegacyOffsetSize:], uint32(len(b)-LogOverhead))
			return b
		}()), UpConvertOptions{}, ErrCorruptMessage},
		{"key length beyond the message", upFixCRC(t, func() []byte {
			b := legacyUpAppendMessage(nil, MagicV0, 0, 0, 0, []byte("k"), []byte("v"))
			binary.BigEndian.PutUint32(b[LegacyHeaderSizeV0:], 1000)
			return b
		}()), UpConvertOptions{}, ErrCorruptMessage},
		{"key length -2", upFixCRC(t, func() []byte {
			b := legacyUpAppendMessage(nil, MagicV1, 0, 0, 0, []byte("k"), []byte("v"))
			binary.BigEndian.PutUint32(b[LegacyHeaderSizeV1:], 0xfffffffe)
			return b
		}()), UpConvertOptions{}, ErrCorruptMessage},
		{"negative timestamp", BuildMessageSet(MessageSetOptions{Magic: MagicV1}, []LegacyMessage{{Timestamp: -2}}), UpConvertOptions{}, ErrInvalidTimestamp},
		{"message above max.message.bytes", plain(MagicV1), UpConvertOptions{MaxMessageBytes: 40}, ErrTooLarge},
		{"wrapper inflating beyond the cap", BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionGzip},
			[]LegacyMessage{{Value: make([]byte, 1<<20)}}), UpConvertOptions{MaxUncompressedBytes: 64 << 10}, ErrTooLarge},
		{"unknown target codec", plain(MagicV0), UpConvertOptions{Compression: 6}, ErrUnsupportedCompression},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, _, err := UpConvert(dst, tc.set, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if string(out) != "keep" {
				t.Fatalf("dst after a failure: %q", out)
			}
		})
	}
}

func TestUpConvertAccepts(t *testing.T) {
	ptr := func(v int64) *int64 { return &v }
	msgs := upMessages(3, 1000)
	for _, tc := range []struct {
		name string
		set  []byte
	}{
		// librdkafka wrote 0 as the wrapper offset of magic 1 sets.
		{"magic 1 wrapper offset 0", BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionGzip, WrapperOffset: ptr(0)}, msgs)},
		{"magic 1 wrapper offset beyond the last inner", BuildMessageSet(MessageSetOptions{Magic: MagicV1, Compression: CompressionSnappy, WrapperOffset: ptr(1 << 40)}, msgs)},
		// Magic 0 inner offsets are absolute and not checked.
		{"magic 0 wrapper with any offsets", BuildMessageSet(MessageSetOptions{Magic: MagicV0, Compression: CompressionLZ4, WrapperOffset: ptr(-5)}, msgs)},
		// Java clients of 0.8.2-0.9 computed the lz4 header checksum over
		// the frame magic too; BuildMessageSet writes it that way.
		{"magic 0 lz4 with the old header checksum", BuildMessageSet(MessageSetOptions{Magic: MagicV0, Compression: CompressionLZ4}, msgs)},
		{"magic 0 lz4 with a correct header checksum", upWrap(t, MagicV0, CompressionLZ4, 2, BuildMessageSet(MessageSetOptions{Magic: MagicV0}, msgs))},
		{"magic 0 lz4 with a garbage header checksum", func() []byte {
			set := upWrap(t, MagicV0, CompressionLZ4, 2, BuildMessageSet(MessageSetOptions{Magic: MagicV0}, msgs))
			set[LegacyHeaderSizeV0+8+6] ^= 0x5a
			return upFixCRC(t, set)
		}()},
		// Old uncompressed producers numbered every message 0.
		{"uncompressed messages all at offset 0", func() []byte {
			var set []byte
			for _, m := range msgs {
				set = legacyUpAppendMessage(set, MagicV1, 0, 0, m.Timestamp, m.Key, m.Value)
			}
			return set
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, res, err := UpConvert(nil, tc.set, UpConvertOptions{KeepCompression: true})
			if err != nil {
				t.Fatal(err)
			}
			wantTS := func(i int) int64 {
				if res.Magic == MagicV0 {
					return -1
				}
				return msgs[i].Timestamp
			}
			upCheckBatch(t, out, msgs, wantTS, res.SourceCompression)
		})
	}
}

func TestUpConvertBrokenLZ4Checksum(t *testing.T) {
	// The header checksum of a frame from our lz4 writer is xxHash32 of the
	// descriptor; BuildMessageSet's magic 0 one covers the frame magic too.
	frame, err := Compress(CompressionLZ4, nil, []byte("hello hello hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := byte(xxh32(frame[4:6])>>8), frame[6]; got != want {
		t.Fatalf("xxh32 header checksum %#x, lz4 writer wrote %#x", got, want)
	}
	if byte(xxh32(frame[0:6])>>8) == frame[6] {
		t.Fatal("test frame's broken and correct checksums coincide")
	}
	set := BuildMessageSet(MessageSetOptions{Magic: MagicV0, Compression: CompressionLZ4}, []LegacyMessage{{Value: []byte("v")}})
	value := set[LegacyHeaderSizeV0+8:]
	if value[6] != byte(xxh32(value[:6])>>8) {
		t.Fatal("BuildMessageSet did not write the magic 0 header checksum")
	}
	if _, err := lz4.NewReader(bytes.NewReader(value)).Read(make([]byte, 100)); err == nil {
		t.Fatal("a standard lz4 reader accepted the broken checksum: the test proves nothing")
	}
}

func TestIsLegacySet(t *testing.T) {
	if !IsLegacySet(BuildMessageSet(MessageSetOptions{Magic: MagicV0}, upMessages(1, 0))) ||
		!IsLegacySet(BuildMessageSet(MessageSetOptions{Magic: MagicV1}, upMessages(1, 0))) {
		t.Fatal("legacy sets not recognised")
	}
	if IsLegacySet(BuildBatch(BuildOptions{}, sampleRecords(1, 1))) || IsLegacySet(nil) || IsLegacySet(make([]byte, 16)) {
		t.Fatal("v2 batch or short input taken for a legacy set")
	}
}

func TestUpConvertAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	set := BuildMessageSet(MessageSetOptions{Magic: MagicV1}, upMessages(50, 1000))
	dst := make([]byte, 0, 64<<10)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := UpConvert(dst[:0], set, UpConvertOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations converting an uncompressed set into a large enough dst", allocs)
	}
}

// FuzzUpConvert feeds arbitrary bytes to UpConvert. It must not panic, and
// whatever it accepts must be a valid v2 batch with as many records as it
// reports. With fix set, entry sizes and CRCs are patched first so the
// fuzzer gets past the checksum.
func FuzzUpConvert(f *testing.F) {
	for _, magic := range []int8{MagicV0, MagicV1} {
		for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4} {
			f.Add(BuildMessageSet(MessageSetOptions{Magic: magic, Compression: c}, upMessages(3, 5)), false, uint8(0))
		}
		f.Add(BuildMessageSet(MessageSetOptions{Magic: magic, Compression: CompressionSnappy, XerialSnappy: true}, upMessages(2, 5)), false, uint8(1))
	}
	f.Add([]byte{}, false, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, fix bool, codec uint8) {
		if fix {
			for pos := 0; len(b)-pos > LegacyOffsetMagic; {
				size := int(int32(binary.BigEndian.Uint32(b[pos+LegacyOffsetSize:])))
				if size < legacyUpMinSize || size > len(b)-pos-LogOverhead {
					size = len(b) - pos - LogOverhead
					binary.BigEndian.PutUint32(b[pos+LegacyOffsetSize:], uint32(size))
				}
				e := b[pos : pos+LogOverhead+size]
				binary.BigEndian.PutUint32(e[LegacyOffsetCRC:], crc32.ChecksumIEEE(e[LegacyOffsetMagic:]))
				pos += len(e)
			}
		}
		opts := UpConvertOptions{Compression: Compression(codec % 5), KeepCompression: codec >= 128, MaxUncompressedBytes: 1 << 20, Now: 1000, TimestampBeforeMaxMs: 1 << 40, TimestampAfterMaxMs: 1 << 40}
		out, res, err := UpConvert(nil, b, opts)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("failure left %d bytes in dst", len(out))
			}
			return
		}
		info, err := Validate(out, DefaultValidateOptions())
		if err != nil {
			t.Fatalf("UpConvert accepted (%+v) but its batch does not validate: %v", res, err)
		}
		if int(info.RecordCount) != res.Records {
			t.Fatalf("batch holds %d records, result says %d", info.RecordCount, res.Records)
		}
	})
}

// BenchmarkUpConvert measures converting a legacy set of 100 messages of
// 100-byte values (about 12 KiB, what an old producer's 16 KiB batch held)
// into a v2 batch, keeping the producer's codec, and reports records/s.
func BenchmarkUpConvert(b *testing.B) {
	recs := benchRecords(100)
	msgs := make([]LegacyMessage, len(recs))
	for i, r := range recs {
		msgs[i] = LegacyMessage{Offset: int64(i), Timestamp: 1_700_000_000_000 + int64(i), Key: r.Key, Value: r.Value}
	}
	for _, magic := range []int8{MagicV0, MagicV1} {
		for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4} {
			b.Run(fmt.Sprintf("v%d/%s", magic, c), func(b *testing.B) {
				set := BuildMessageSet(MessageSetOptions{Magic: magic, Compression: c, XerialSnappy: true}, msgs)
				dst := make([]byte, 0, 64<<10)
				b.SetBytes(int64(len(set)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := UpConvert(dst[:0], set, UpConvertOptions{KeepCompression: true}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(msgs))/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

func TestLegacyUpAppendRecordMatchesAppendRecord(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 300)
	for _, tc := range []struct {
		ts         int64
		off        int32
		key, value []byte
	}{
		{0, 0, nil, nil}, {-1, 1, []byte{}, []byte("x")}, {1 << 40, 200, []byte("key"), big},
		{-(1 << 62), 1 << 20, big, []byte{}}, {63, 64, make([]byte, 63), make([]byte, 1<<16)},
	} {
		want := appendRecord(nil, &Record{TimestampDelta: tc.ts, Key: tc.key, Value: tc.value}, tc.off)
		if got := legacyUpAppendRecord(nil, tc.ts, tc.off, tc.key, tc.value); !bytes.Equal(got, want) {
			t.Fatalf("ts %d offset %d key %d value %d bytes: % x, want % x", tc.ts, tc.off, len(tc.key), len(tc.value), got[:min(len(got), 16)], want[:min(len(want), 16)])
		}
	}
}
