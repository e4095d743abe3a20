package record

import (
	"bytes"
	"fmt"
	"testing"
)

// benchRecords returns n records of 100-byte values with 10-byte keys, text
// that compresses the way log lines do.
func benchRecords(n int) []Record {
	recs := make([]Record, n)
	line := []byte("2025-01-01T00:00:00Z INFO request served path=/api/v1/items status=200 bytes=5120 duration=3ms ok....")[:100]
	for i := range recs {
		recs[i] = Record{
			TimestampDelta: int64(i),
			Key:            fmt.Appendf(nil, "key-%06d", i),
			Value:          bytes.Clone(line),
		}
	}
	return recs
}

// benchValidate validates a batch of about 16 KiB of 100-byte records and
// reports the cost per record.
func benchValidate(b *testing.B, c Compression) {
	const n = 140 // ~16 KiB uncompressed with per-record overhead
	batch := BuildBatch(BuildOptions{Compression: c, FirstTimestamp: 1_700_000_000_000}, benchRecords(n))
	opts := DefaultValidateOptions()
	if _, err := Validate(batch, opts); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(batch, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}

func BenchmarkValidateUncompressed(b *testing.B) { benchValidate(b, CompressionNone) }
func BenchmarkValidateGzip(b *testing.B)         { benchValidate(b, CompressionGzip) }
func BenchmarkValidateSnappy(b *testing.B)       { benchValidate(b, CompressionSnappy) }
func BenchmarkValidateLZ4(b *testing.B)          { benchValidate(b, CompressionLZ4) }
func BenchmarkValidateZstd(b *testing.B)         { benchValidate(b, CompressionZstd) }

func BenchmarkRecords(b *testing.B) {
	batch := BuildBatch(BuildOptions{}, benchRecords(140))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Records(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
}
