package record

import (
	"encoding/binary"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to Validate and Records. Neither may
// panic, and whatever Validate accepts Records must decode to the same count.
// With fix set, the length and CRC are patched first so the fuzzer reaches
// the records and codecs rather than stopping at the checksum.
func FuzzValidate(f *testing.F) {
	for _, c := range allCodecs {
		f.Add(BuildBatch(BuildOptions{Compression: c}, sampleRecords(4, 8)), false)
		f.Add(BuildBatch(BuildOptions{Compression: c, Idempotent: true, ProducerID: 1, BaseSequence: 5}, sampleRecords(1, 0)), true)
	}
	f.Add(BuildBatch(BuildOptions{KeepOffsetDeltas: true}, []Record{{OffsetDelta: 1}, {OffsetDelta: 4}}), true)
	f.Add(BuildBatch(BuildOptions{}, nil), true)
	f.Add([]byte{}, false)

	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		if fix && len(b) >= HeaderSize {
			binary.BigEndian.PutUint32(b[OffsetBatchLength:], uint32(len(b)-LogOverhead))
			b[OffsetMagic] = MagicV2
			fixCRC(b)
		}
		for _, opts := range []ValidateOptions{
			{MaxUncompressedBytes: 1 << 20},
			{MaxUncompressedBytes: 1 << 20, RequireKeys: true, AllowControl: true, AllowLogAppendTime: true, AllowOffsetGaps: true},
		} {
			info, err := Validate(b, opts)
			if err != nil {
				continue
			}
			recs, rerr := Records(b, 1<<20)
			if rerr != nil {
				t.Fatalf("Validate accepted (%+v) but Records failed: %v", info, rerr)
			}
			if int32(len(recs)) != info.RecordCount {
				t.Fatalf("Validate counted %d records, Records %d", info.RecordCount, len(recs))
			}
			for i, r := range recs {
				if opts.RequireKeys && r.Key == nil {
					t.Fatalf("record %d: null key passed RequireKeys", i)
				}
				if !opts.AllowOffsetGaps && r.OffsetDelta != int32(i) {
					t.Fatalf("record %d: offset delta %d passed", i, r.OffsetDelta)
				}
			}
		}
	})
}
