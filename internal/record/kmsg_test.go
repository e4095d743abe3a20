package record

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"io"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// independentDecompress decompresses without this package's codec code, so
// the cross-check does not test Decompress against itself.
func independentDecompress(t *testing.T, c Compression, src []byte) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case CompressionNone:
		return src
	case CompressionGzip:
		zr, err := stdgzip.NewReader(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case CompressionSnappy:
		out, err := s2.Decode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	case CompressionLZ4:
		r = lz4.NewReader(bytes.NewReader(src))
	case CompressionZstd:
		zr, err := zstd.NewReader(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return out
}

// TestBuildBatchMatchesKmsg decodes BuildBatch output with franz-go's kmsg
// and checks every field and record.
func TestBuildBatchMatchesKmsg(t *testing.T) {
	recs := sampleRecords(30, 50)
	recs[3].Attributes = 0 // records carry no attributes in practice
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			opts := BuildOptions{
				BaseOffset:           1234,
				PartitionLeaderEpoch: -1,
				Compression:          c,
				FirstTimestamp:       1_700_000_000_123,
				Idempotent:           true,
				ProducerID:           99,
				ProducerEpoch:        2,
				BaseSequence:         17,
			}
			b := BuildBatch(opts, recs)
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil {
				t.Fatalf("kmsg ReadFrom: %v", err)
			}
			if kb.FirstOffset != 1234 || kb.PartitionLeaderEpoch != -1 || kb.Magic != 2 ||
				int(kb.Length) != len(b)-LogOverhead || uint32(kb.CRC) != ComputeCRC(b) ||
				kb.Attributes != int16(c) || kb.LastOffsetDelta != 29 ||
				kb.FirstTimestamp != opts.FirstTimestamp || kb.MaxTimestamp != opts.FirstTimestamp+29*7-3 ||
				kb.ProducerID != 99 || kb.ProducerEpoch != 2 || kb.FirstSequence != 17 || kb.NumRecords != 30 {
				t.Fatalf("kmsg batch fields: %+v", kb)
			}
			raw := independentDecompress(t, c, kb.Records)
			for i := range recs {
				l, n := binary.Varint(raw)
				if n <= 0 || int(l)+n > len(raw) {
					t.Fatalf("record %d: bad length prefix", i)
				}
				var kr kmsg.Record
				if err := kr.ReadFrom(raw[:n+int(l)]); err != nil {
					t.Fatalf("record %d: kmsg ReadFrom: %v", i, err)
				}
				raw = raw[n+int(l):]
				w := recs[i]
				if kr.OffsetDelta != int32(i) || kr.TimestampDelta64 != w.TimestampDelta ||
					!sameBytes(kr.Key, w.Key) || !sameBytes(kr.Value, w.Value) || len(kr.Headers) != len(w.Headers) {
					t.Fatalf("record %d: kmsg %+v, built %+v", i, kr, w)
				}
				for j, h := range w.Headers {
					if kr.Headers[j].Key != h.Key || !sameBytes(kr.Headers[j].Value, h.Value) {
						t.Fatalf("record %d header %d: kmsg %+v, built %+v", i, j, kr.Headers[j], h)
					}
				}
			}
			if len(raw) != 0 {
				t.Fatalf("%d bytes after the last record", len(raw))
			}
		})
	}
}

// TestValidateKmsgBatch validates a batch encoded by kmsg (as franz-go
// producers build them) rather than by BuildBatch.
func TestValidateKmsgBatch(t *testing.T) {
	var raw []byte
	for i := range 20 {
		r := kmsg.Record{
			TimestampDelta64: int64(i * 3),
			OffsetDelta:      int32(i),
			Key:              []byte{byte(i)},
			Value:            bytes.Repeat([]byte{'v'}, i*10),
			Headers:          []kmsg.Header{{Key: "trace", Value: []byte("abc")}},
		}
		body := r.AppendTo(nil)
		// AppendTo writes r.Length as given; compute it from the body.
		_, n := binary.Varint(body)
		r.Length = int32(len(body) - n)
		raw = r.AppendTo(raw)
	}
	for _, c := range allCodecs {
		compressed, err := Compress(c, nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		kb := kmsg.RecordBatch{
			FirstOffset:          0,
			PartitionLeaderEpoch: -1,
			Magic:                2,
			Attributes:           int16(c),
			LastOffsetDelta:      19,
			FirstTimestamp:       1000,
			MaxTimestamp:         1000 + 19*3,
			ProducerID:           -1,
			ProducerEpoch:        -1,
			FirstSequence:        -1,
			NumRecords:           20,
			Records:              compressed,
		}
		kb.Length = int32(len(compressed) + HeaderSize - LogOverhead)
		b := kb.AppendTo(nil)
		fixCRC(b)
		info, err := Validate(b, DefaultValidateOptions())
		if err != nil {
			t.Fatalf("%s: Validate: %v", c, err)
		}
		if info.RecordCount != 20 || info.MaxTimestamp != 1057 || info.MinTimestamp != 1000 || info.UncompressedBytes != len(raw) {
			t.Fatalf("%s: info %+v", c, info)
		}
		recs, err := Records(b, 0)
		if err != nil || len(recs) != 20 || recs[19].Headers[0].Key != "trace" || len(recs[19].Value) != 190 {
			t.Fatalf("%s: Records: %v", c, err)
		}
	}
}
