package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// configMatrix is the set of configurations every round-trip test runs on.
func configMatrix() map[string]Config {
	def := DefaultConfig()
	def.FileDeleteDelayMs = 0

	tinySeg := tinyConfig()

	tinyIdx := DefaultConfig()
	tinyIdx.IndexIntervalBytes = 0
	tinyIdx.FileDeleteDelayMs = 0

	fullIdx := DefaultConfig()
	fullIdx.MaxIndexSize = 24 // 3 offset entries, 2 time entries: rolls on full index
	fullIdx.IndexIntervalBytes = 100
	fullIdx.FileDeleteDelayMs = 0

	sync1 := tinyConfig()
	sync1.FlushIntervalMessages = 1
	return map[string]Config{"default": def, "tinySegments": tinySeg, "tinyIndexInterval": tinyIdx, "fullIndex": fullIdx, "flushEveryMessage": sync1}
}

func forAllConfigs(t *testing.T, fn func(t *testing.T, e *testEnv)) {
	for name, cfg := range configMatrix() {
		t.Run(name, func(t *testing.T) { fn(t, newEnv(t, cfg)) })
	}
}

func variedSpec(i int) batchSpec {
	return batchSpec{records: 1 + i%5, valueSize: 10 + (i*37)%300, ts: 1000 + int64(i)*10, fill: byte(i)}
}

func TestAppendReadRoundTrip(t *testing.T) {
	forAllConfigs(t, func(t *testing.T, e *testEnv) {
		m, l := e.openLog()
		want := appendN(t, l, 300, variedSpec)
		var total int64
		for _, b := range want {
			total += int64(len(b))
		}
		if l.Size() != total {
			t.Fatalf("Size = %d, want %d", l.Size(), total)
		}
		checkBatches(t, readAll(t, l, 0, 1<<20), want)
		checkBatches(t, readAll(t, l, 0, 1), want) // minOneBatch: one batch at a time
		checkEveryOffset(t, l, want)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		m2 := e.open()
		defer m2.Close()
		l2 := m2.Get("t", 0)
		if l2 == nil || l2.LogEndOffset() != l.LogEndOffset() {
			t.Fatalf("reopened log end offset mismatch")
		}
		checkBatches(t, readAll(t, l2, 0, 1<<20), want)
		checkEveryOffset(t, l2, want)
		// Appends continue after reopen.
		more := appendN(t, l2, 20, variedSpec)
		checkBatches(t, readAll(t, l2, 0, 1<<20), append(want, more...))
	})
}

// checkEveryOffset reads at every offset and checks the first batch returned
// is the one holding it (a read from the middle of a batch returns all of it).
func checkEveryOffset(t *testing.T, l *Log, want [][]byte) {
	t.Helper()
	for _, b := range want {
		h, _ := record.ParseHeader(b)
		for off := h.BaseOffset; off <= h.LastOffset(); off++ {
			rr, err := l.Read(off, 1, l.EndPosition(), true)
			if err != nil {
				t.Fatalf("read %d: %v", off, err)
			}
			if rr.FirstOffset != h.BaseOffset || rr.Size != int64(len(b)) {
				t.Fatalf("read %d: first offset %d size %d, want %d size %d", off, rr.FirstOffset, rr.Size, h.BaseOffset, len(b))
			}
			got := make([]byte, rr.Size)
			if _, err := rr.File.ReadAt(got, rr.Pos); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(b) {
				t.Fatalf("read %d: wrong bytes", off)
			}
		}
	}
}

func TestReadBounds(t *testing.T) {
	e := newEnv(t, DefaultConfig())
	m, l := e.openLog()
	defer m.Close()
	var ends []Position
	var batches [][]byte
	for i := 0; i < 10; i++ {
		b := makeBatch(batchSpec{records: 3, valueSize: 50, ts: 1})
		res, err := l.Append(b, AppendOptions{AssignOffsets: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.BaseOffset != int64(i*3) || res.LastOffset != int64(i*3+2) {
			t.Fatalf("batch %d got offsets %d..%d", i, res.BaseOffset, res.LastOffset)
		}
		ends = append(ends, res.EndPosition)
		batches = append(batches, b)
	}
	bsize := int64(len(batches[0]))

	// upTo = end of batch 4: batches 0..4 only.
	rr, err := l.Read(0, 1<<20, ends[4], false)
	if err != nil || rr.Size != 5*bsize {
		t.Fatalf("upTo read: size %d err %v, want %d", rr.Size, err, 5*bsize)
	}
	// Read starting at upTo returns nothing.
	if rr, err := l.Read(15, 1<<20, ends[4], false); err != nil || rr.Size != 0 {
		t.Fatalf("read at upTo: %+v %v", rr, err)
	}
	// maxBytes: 2.5 batches gives 2 whole batches.
	if rr, _ := l.Read(4, int32(2*bsize+bsize/2), l.EndPosition(), false); rr.Size != 2*bsize || rr.FirstOffset != 3 {
		t.Fatalf("maxBytes read: %+v", rr)
	}
	// maxBytes below one batch: nothing without minOneBatch, one batch with it.
	if rr, _ := l.Read(0, 10, l.EndPosition(), false); rr.Size != 0 {
		t.Fatalf("small maxBytes without minOneBatch: %+v", rr)
	}
	if rr, _ := l.Read(0, 10, l.EndPosition(), true); rr.Size != bsize {
		t.Fatalf("small maxBytes with minOneBatch: %+v", rr)
	}
	// Reading at the log end is empty, past it is out of range.
	if rr, err := l.Read(30, 100, l.EndPosition(), true); err != nil || rr.Size != 0 {
		t.Fatalf("read at LEO: %+v %v", rr, err)
	}
	if _, err := l.Read(31, 100, l.EndPosition(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past LEO: %v", err)
	}
	// PositionOf agrees with append results.
	for i, want := range ends[:9] {
		got, err := l.PositionOf(want.Offset)
		if err != nil || got != want {
			t.Fatalf("PositionOf(%d) = %+v %v, want %+v (batch %d)", want.Offset, got, err, want, i)
		}
	}
}

func TestRollBySize(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1000
	e := newEnv(t, cfg)
	m, l := e.openLog()
	defer m.Close()
	b := makeBatch(batchSpec{valueSize: 200})
	per := 1000 / len(b)
	appendN(t, l, per*5, func(int) batchSpec { return batchSpec{valueSize: 200} })
	if got := l.NumSegments(); got != 5 {
		t.Fatalf("segments = %d, want 5 (%d batches of %d bytes per segment)", got, per, len(b))
	}
	for _, s := range l.segments() {
		if s.size.Load() > cfg.SegmentBytes {
			t.Fatalf("segment %d has %d bytes", s.base, s.size.Load())
		}
	}
	// Rolled segments' indexes are written whole and trimmed; the active
	// one's entries are written as they accumulate, never preallocated.
	segs := l.segments()
	fi, _ := os.Stat(segs[0].path(indexSuffix))
	if fi.Size() != int64(segs[0].index.len()*8) {
		t.Fatalf("rolled index not trimmed: %d bytes", fi.Size())
	}
	fi, _ = os.Stat(segs[len(segs)-1].path(indexSuffix))
	if fi.Size() > int64(segs[len(segs)-1].index.len()*8) {
		t.Fatalf("active index has %d bytes for %d entries", fi.Size(), segs[len(segs)-1].index.len())
	}
}

func TestRollByTime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentMs = 60_000
	e := newEnv(t, cfg)
	m, l := e.openLog()
	defer m.Close()
	now := func() int64 { return e.clock.Now().UnixMilli() }
	appendN(t, l, 3, func(int) batchSpec { return batchSpec{ts: now()} })
	e.clock.Advance(59 * time.Second)
	appendN(t, l, 1, func(int) batchSpec { return batchSpec{ts: now()} })
	if l.NumSegments() != 1 {
		t.Fatalf("rolled too early: %d segments", l.NumSegments())
	}
	e.clock.Advance(2 * time.Second)
	appendN(t, l, 1, func(int) batchSpec { return batchSpec{ts: now()} })
	if l.NumSegments() != 2 {
		t.Fatalf("did not roll after segment.ms: %d segments", l.NumSegments())
	}
	if got := l.segments()[1].base; got != 4 {
		t.Fatalf("new segment base %d, want 4", got)
	}
}

func TestIndexLookupManySegments(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 4096
	cfg.IndexIntervalBytes = 256
	cfg.MaxIndexSize = 1 << 12
	e := newEnv(t, cfg)
	m, l := e.openLog()
	defer m.Close()
	want := appendN(t, l, 1000, variedSpec)
	if l.NumSegments() < 20 {
		t.Fatalf("only %d segments", l.NumSegments())
	}
	checkEveryOffset(t, l, want)
	// Every index entry points at a batch whose last offset it names.
	buf := make([]byte, batchPrefix)
	for _, s := range l.segments() {
		for _, ent := range indexEntries(t, s) {
			b, err := s.readBounds(int64(ent.pos), s.size.Load(), buf)
			if err != nil || b.lastOffset != s.base+int64(ent.rel) {
				t.Fatalf("segment %d: entry %+v does not match batch %+v (%v)", s.base, ent, b, err)
			}
		}
	}
}

func segmentFiles(t *testing.T, dir, suffix string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestRetentionByTime(t *testing.T) {
	cfg := tinyConfig()
	cfg.RetentionMs = 3_600_000
	e := newEnv(t, cfg)
	m, l := e.openLog()
	now := func() int64 { return e.clock.Now().UnixMilli() }
	appendN(t, l, 40, func(int) batchSpec { return batchSpec{valueSize: 100, ts: now()} })
	old := l.NumSegments()
	e.clock.Advance(2 * time.Hour)
	appendN(t, l, 40, func(int) batchSpec { return batchSpec{valueSize: 100, ts: now()} })
	firstNew := l.segments()[old-1].nextOffset
	_ = firstNew
	n, err := l.EnforceRetention(e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n < old-1 || n > old {
		t.Fatalf("deleted %d segments, expected about %d", n, old)
	}
	if l.LogStartOffset() != l.segments()[0].base || l.LogStartOffset() == 0 {
		t.Fatalf("log start %d, first segment %d", l.LogStartOffset(), l.segments()[0].base)
	}
	if _, err := l.Read(0, 100, l.EndPosition(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below log start: %v", err)
	}
	if got := len(segmentFiles(t, e.partDir(), logSuffix)); got != l.NumSegments() {
		t.Fatalf("%d .log files for %d segments", got, l.NumSegments())
	}
	if got := segmentFiles(t, e.partDir(), deletedSuffix); len(got) != 0 {
		t.Fatalf("deleted files left: %v", got)
	}
	// Everything expired: the active segment goes too, replaced by an empty one.
	e.clock.Advance(2 * time.Hour)
	leo := l.LogEndOffset()
	if _, err := l.EnforceRetention(e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != 1 || l.LogStartOffset() != leo || l.Size() != 0 {
		t.Fatalf("after full expiry: %d segments, log start %d (LEO %d), size %d", l.NumSegments(), l.LogStartOffset(), leo, l.Size())
	}
	// The log start offset is checkpointed and survives a restart.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cp, err := readOffsetCheckpoint(OSFS, filepath.Join(e.dir, logStartCheckpointFile))
	if err != nil || cp[TopicPartition{"t", 0}] != leo {
		t.Fatalf("log start checkpoint %v %v, want %d", cp, err, leo)
	}
	m2 := e.open()
	defer m2.Close()
	if got := m2.Get("t", 0).LogStartOffset(); got != leo {
		t.Fatalf("log start after reopen %d, want %d", got, leo)
	}
}

func TestRetentionBySize(t *testing.T) {
	cfg := tinyConfig()
	cfg.RetentionBytes = 5000
	e := newEnv(t, cfg)
	m, l := e.openLog()
	defer m.Close()
	appendN(t, l, 100, func(int) batchSpec { return batchSpec{valueSize: 100} })
	before := l.Size()
	n, err := l.EnforceRetention(e.clock.Now())
	if err != nil || n == 0 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	if l.Size() < cfg.RetentionBytes || l.Size() >= cfg.RetentionBytes+cfg.SegmentBytes {
		t.Fatalf("size %d after retention (was %d), want in [%d, %d)", l.Size(), before, cfg.RetentionBytes, cfg.RetentionBytes+cfg.SegmentBytes)
	}
	if l.LogStartOffset() != l.segments()[0].base {
		t.Fatalf("log start %d != first segment %d", l.LogStartOffset(), l.segments()[0].base)
	}
	if got := len(segmentFiles(t, e.partDir(), logSuffix)); got != l.NumSegments() {
		t.Fatalf("%d .log files for %d segments", got, l.NumSegments())
	}
	// The high watermark fences retention.
	l.SetHighWatermark(l.LogStartOffset())
	cfg.RetentionBytes = 0
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.EnforceRetention(e.clock.Now()); n != 0 {
		t.Fatalf("retention deleted %d segments past the high watermark", n)
	}
}

func TestDeleteDelayKeepsFilesForReaders(t *testing.T) {
	cfg := tinyConfig()
	cfg.FileDeleteDelayMs = 50
	cfg.RetentionBytes = 0
	e := newEnv(t, cfg)
	m, l := e.openLog()
	defer m.Close()
	want := appendN(t, l, 30, func(i int) batchSpec { return batchSpec{valueSize: 100, fill: byte(i)} })
	rr, err := l.Read(0, 1<<20, l.EndPosition(), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.EnforceRetention(e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if len(segmentFiles(t, e.partDir(), deletedSuffix)) == 0 {
		t.Fatal("no .deleted files right after retention")
	}
	// The reader's file is still usable until the delay passes.
	buf := make([]byte, len(want[0]))
	if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil || string(buf) != string(want[0]) {
		t.Fatalf("read of deleted segment: %v", err)
	}
	waitFor(t, "deleted files removed", func() bool { return len(segmentFiles(t, e.partDir(), deletedSuffix)) == 0 })
}

func TestDeleteRecordsBefore(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	defer m.Close()
	want := appendN(t, l, 50, func(i int) batchSpec { return batchSpec{records: 2, valueSize: 100} })
	segs := l.NumSegments()
	got, err := l.DeleteRecordsBefore(51)
	if err != nil || got != 51 {
		t.Fatalf("DeleteRecordsBefore = %d, %v", got, err)
	}
	if l.NumSegments() >= segs {
		t.Fatal("no segment deleted")
	}
	if _, err := l.Read(50, 100, l.EndPosition(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below new log start: %v", err)
	}
	rr, err := l.Read(51, 100, l.EndPosition(), true)
	if err != nil || rr.FirstOffset != 50 {
		t.Fatalf("read at log start: %+v %v", rr, err)
	}
	checkBatches(t, readAll(t, l, 52, 1<<20), want[26:])
	if _, err := l.DeleteRecordsBefore(101); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("delete past LEO: %v", err)
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	forAllConfigs(t, func(t *testing.T, e *testEnv) {
		m, l := e.openLog()
		defer m.Close()
		// Batch i has 3 records with timestamps 1000+100i .. +2.
		appendN(t, l, 100, func(i int) batchSpec { return batchSpec{records: 3, valueSize: 40, ts: 1000 + int64(i)*100} })
		for _, c := range []struct {
			ts         int64
			off, maxTs int64
			found      bool
		}{
			{0, 0, 1002, true},
			{1002, 0, 1002, true},
			{1003, 3, 1102, true},
			{5050, 123, 5102, true},
			{10902, 297, 10902, true},
			{10903, -1, -1, false},
		} {
			off, ts, found, err := l.OffsetForTimestamp(c.ts)
			if err != nil || off != c.off || ts != c.maxTs || found != c.found {
				t.Fatalf("OffsetForTimestamp(%d) = %d, %d, %v, %v; want %d, %d, %v", c.ts, off, ts, found, err, c.off, c.maxTs, c.found)
			}
		}
		if off, ts, epoch, err := l.MaxTimestamp(); off != 299 || ts != 10902 || epoch != 3 || err != nil {
			t.Fatalf("MaxTimestamp = %d, %d, epoch %d, %v; want 299, 10902, epoch 3", off, ts, epoch, err)
		}
	})
}

func TestTruncateTo(t *testing.T) {
	forAllConfigs(t, func(t *testing.T, e *testEnv) {
		m, l := e.openLog()
		want := appendN(t, l, 60, func(i int) batchSpec { return batchSpec{records: 2, valueSize: 60, ts: int64(i)} })
		if err := l.TruncateTo(81); err != nil { // mid-batch: the batch 80..81 goes
			t.Fatal(err)
		}
		if l.LogEndOffset() != 80 {
			t.Fatalf("LEO after truncate %d, want 80", l.LogEndOffset())
		}
		checkBatches(t, readAll(t, l, 0, 1<<20), want[:40])
		more := appendN(t, l, 5, func(i int) batchSpec { return batchSpec{records: 2, valueSize: 60, ts: 100} })
		checkBatches(t, readAll(t, l, 0, 1<<20), append(want[:40:40], more...))
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		m2 := e.open()
		defer m2.Close()
		checkBatches(t, readAll(t, m2.Get("t", 0), 0, 1<<20), append(want[:40:40], more...))
	})
}

func TestLeaderEpochCache(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	for _, epoch := range []int32{1, 1, 2, 4, 4} {
		b := makeBatch(batchSpec{records: 10, valueSize: 10})
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: epoch}); err != nil {
			t.Fatal(err)
		}
	}
	wantEpochs := []EpochEntry{{1, 0}, {2, 20}, {4, 30}}
	if got := fmt.Sprint(l.LeaderEpochs()); got != fmt.Sprint(wantEpochs) {
		t.Fatalf("epochs %s, want %v", got, wantEpochs)
	}
	for _, c := range []struct {
		req   int32
		epoch int32
		end   int64
	}{{0, 0, 0}, {1, 1, 20}, {2, 2, 30}, {3, 2, 30}, {4, 4, 50}, {5, -1, -1}, {-1, -1, -1}} {
		ep, end := l.EndOffsetForEpoch(c.req)
		if ep != c.epoch || end != c.end {
			t.Fatalf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", c.req, ep, end, c.epoch, c.end)
		}
	}
	if err := l.TruncateTo(30); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(l.LeaderEpochs()); got != fmt.Sprint([]EpochEntry{{1, 0}, {2, 20}}) {
		t.Fatalf("epochs after truncation %s", got)
	}
	if _, err := l.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(l.LeaderEpochs()); got != fmt.Sprint([]EpochEntry{{1, 5}, {2, 20}}) {
		t.Fatalf("epochs after delete records %s", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := readEpochCheckpoint(OSFS, filepath.Join(e.partDir(), leaderEpochCheckpointFile))
	if err != nil || fmt.Sprint(got) != fmt.Sprint([]EpochEntry{{1, 5}, {2, 20}}) {
		t.Fatalf("epoch checkpoint %v %v", got, err)
	}
}

func TestFollowerAppend(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	defer m.Close()
	b := makeBatch(batchSpec{records: 5, baseOffset: 100, leaderEpoch: 7})
	if _, err := l.Append(b, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 105 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	if _, err := l.Append(makeBatch(batchSpec{baseOffset: 104}), AppendOptions{}); !errors.Is(err, ErrUnexpectedAppendOffset) {
		t.Fatalf("append below LEO: %v", err)
	}
	if got := l.LeaderEpochs(); len(got) != 1 || got[0] != (EpochEntry{7, 100}) {
		t.Fatalf("epochs %v", got)
	}
}

// TestMaxTimestampFindsTheRecord: MAX_TIMESTAMP names the first record
// holding the largest timestamp, inside a compressed batch too, with its
// batch's leader epoch; ties go to the earliest batch.
func TestMaxTimestampFindsTheRecord(t *testing.T) {
	forAllConfigs(t, func(t *testing.T, e *testEnv) {
		m, l := e.openLog()
		defer m.Close()
		if off, ts, epoch, err := l.MaxTimestamp(); off != -1 || ts != -1 || epoch != -1 || err != nil {
			t.Fatalf("empty log: MaxTimestamp = %d, %d, %d, %v; want -1s", off, ts, epoch, err)
		}
		batch := func(c record.Compression, deltas ...int64) []byte {
			var recs []record.Record
			for _, d := range deltas {
				recs = append(recs, record.Record{TimestampDelta: d, Value: []byte("value")})
			}
			return record.BuildBatch(record.BuildOptions{Compression: c, FirstTimestamp: 1000}, recs)
		}
		// Offsets 0-2, 3-6 (max 1900 at 4 and 6), 7-8 (ties at 1900, later).
		for i, b := range [][]byte{batch(0, 0, 10, 20), batch(record.CompressionZstd, 5, 900, 3, 900), batch(0, 900, 1)} {
			if _, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: int32(2 + i)}); err != nil {
				t.Fatal(err)
			}
		}
		if off, ts, epoch, err := l.MaxTimestamp(); off != 4 || ts != 1900 || epoch != 3 || err != nil {
			t.Fatalf("MaxTimestamp = %d, %d, epoch %d, %v; want 4, 1900, epoch 3", off, ts, epoch, err)
		}
	})
}
