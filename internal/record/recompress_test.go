package record

import (
	"bytes"
	"fmt"
	"testing"
)

func TestRecompressKeepsRecords(t *testing.T) {
	var recs []Record
	for i := 0; i < 50; i++ {
		recs = append(recs, Record{
			OffsetDelta: int32(i),
			Key:         []byte(fmt.Sprintf("k-%d", i)),
			Value:       bytes.Repeat([]byte{byte(i)}, 100),
			Headers:     []RecordHeader{{Key: "h", Value: []byte("v")}},
		})
	}
	codecs := []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}
	for _, from := range codecs {
		for _, to := range codecs {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				in := BuildBatch(BuildOptions{Compression: from, Idempotent: true, ProducerID: 7, ProducerEpoch: 1, BaseSequence: 3}, recs)
				out, err := Recompress(in, to, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				info, err := Validate(out, DefaultValidateOptions())
				if err != nil {
					t.Fatalf("recompressed batch invalid: %v", err)
				}
				if info.Compression != to || info.RecordCount != 50 || info.ProducerID != 7 || info.BaseSequence != 3 {
					t.Fatalf("info = %+v", info)
				}
				got, err := Records(out, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range got {
					if !bytes.Equal(r.Key, recs[i].Key) || !bytes.Equal(r.Value, recs[i].Value) || len(r.Headers) != 1 {
						t.Fatalf("record %d differs after recompression", i)
					}
				}
			})
		}
	}
}
