package storage

import (
	"os"
	"strconv"
	"testing"
)

func benchLog(b *testing.B, cfg Config) (*Manager, *Log) {
	b.Helper()
	m, err := OpenManager(ManagerConfig{Dirs: []string{b.TempDir()}, NodeID: 1}, func(string) Config { return cfg })
	if err != nil {
		b.Fatal(err)
	}
	l, err := m.GetOrCreate("bench", 0, [16]byte{1}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m, l
}

// BenchmarkAppend appends 1 KiB batches (10 records of ~90 bytes).
func BenchmarkAppend(b *testing.B) {
	m, l := benchLog(b, DefaultConfig())
	defer m.Close()
	batch := makeBatch(batchSpec{records: 10, valueSize: 90})
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendLargeLog measures 1 KiB appends on a log that already
// holds SILKWORM_BENCH_LOG_MB megabytes (default 256; set 4096 or more for
// the several-GB case), built from 1 MiB batches.
func BenchmarkAppendLargeLog(b *testing.B) {
	mb := 256
	if s := os.Getenv("SILKWORM_BENCH_LOG_MB"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			mb = v
		}
	}
	cfg := DefaultConfig()
	m, l := benchLog(b, cfg)
	defer m.Close()
	big := makeBatch(batchSpec{records: 16, valueSize: 64 << 10})
	for l.Size() < int64(mb)<<20 {
		if _, err := l.Append(big, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
	batch := makeBatch(batchSpec{records: 10, valueSize: 90})
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func filledLog(b *testing.B, batches int) (*Manager, *Log) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 8 << 20
	m, l := benchLog(b, cfg)
	batch := makeBatch(batchSpec{records: 10, valueSize: 90})
	for range batches {
		if _, err := l.Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
	return m, l
}

// BenchmarkIndexLookup finds the batch of random offsets in a 100k-batch log
// of ~13 segments (segment binary search, index binary search, header scan).
func BenchmarkIndexLookup(b *testing.B) {
	m, l := filledLog(b, 100_000)
	defer m.Close()
	leo := l.LogEndOffset()
	i := int64(0)
	b.ResetTimer()
	for b.Loop() {
		off := (i * 7919) % leo
		i++
		if _, err := l.PositionOf(off); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads 1 MiB ranges at random offsets (no data copy: the
// caller would sendfile).
func BenchmarkRead(b *testing.B) {
	m, l := filledLog(b, 100_000)
	defer m.Close()
	leo := l.LogEndOffset()
	end := l.EndPosition()
	i := int64(0)
	b.ResetTimer()
	for b.Loop() {
		off := (i * 7919) % leo
		i++
		rr, err := l.Read(off, 1<<20, end, true)
		if err != nil || rr.Size == 0 {
			b.Fatal(err)
		}
	}
}
