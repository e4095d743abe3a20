package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// kv is a test record; a nil value is a tombstone.
type kv struct {
	key   string
	value []byte
}

func val(s string) []byte { return []byte(s) }

// keyedBatch builds a batch of keyed records with timestamps ts, ts+1...
func keyedBatch(c record.Compression, ts int64, recs ...kv) []byte {
	rs := make([]record.Record, len(recs))
	for i, r := range recs {
		rs[i] = record.Record{Key: []byte(r.key), Value: r.value, TimestampDelta: int64(i)}
	}
	return record.BuildBatch(record.BuildOptions{Compression: c, FirstTimestamp: ts}, rs)
}

func compactConfig() Config {
	c := tinyConfig()
	c.Compact, c.Delete = true, false
	c.SegmentBytes = 1024
	c.MaxIndexSize = 1024
	c.IndexIntervalBytes = 128
	return c
}

func appendRaw(t *testing.T, l *Log, b []byte) AppendResult {
	t.Helper()
	res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: 1})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res
}

// forceRoll starts a new active segment so everything before it is cleanable.
func forceRoll(t *testing.T, l *Log) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.rollLocked(l.endPos.Load().Offset); err != nil {
		t.Fatalf("roll: %v", err)
	}
}

type seenRecord struct {
	offset int64
	value  []byte
	count  int
}

// readRecords reads the whole log, checks every batch (CRC, offsets
// increasing) and returns per key its last record and how often it appears,
// and the batches read.
func readRecords(t *testing.T, l *Log) (map[string]*seenRecord, []record.Header) {
	t.Helper()
	out := map[string]*seenRecord{}
	var hdrs []record.Header
	prev := int64(-1)
	for _, b := range readCompacted(t, l) {
		h, _ := record.ParseHeader(b)
		if record.ComputeCRC(b) != h.CRC {
			t.Fatalf("batch at %d: bad CRC", h.BaseOffset)
		}
		if h.BaseOffset <= prev {
			t.Fatalf("batch at %d after offset %d: offsets not increasing", h.BaseOffset, prev)
		}
		recs, err := record.Records(b, 0)
		if err != nil {
			t.Fatalf("batch at %d: %v", h.BaseOffset, err)
		}
		for _, r := range recs {
			off := h.BaseOffset + int64(r.OffsetDelta)
			if off <= prev || off > h.LastOffset() {
				t.Fatalf("record offset %d out of order (prev %d, batch last %d)", off, prev, h.LastOffset())
			}
			prev = off
			s := out[string(r.Key)]
			if s == nil {
				s = &seenRecord{}
				out[string(r.Key)] = s
			}
			s.offset, s.value, s.count = off, r.Value, s.count+1
		}
		prev = max(prev, h.LastOffset())
		hdrs = append(hdrs, h)
	}
	return out, hdrs
}

// writeWorkload appends n single-record batches cycling over keys and
// returns the latest value and offset per key.
func writeWorkload(t *testing.T, l *Log, c record.Compression, n, keys int, tag string) map[string]seenRecord {
	t.Helper()
	latest := map[string]seenRecord{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key-%03d", i%keys)
		v := val(fmt.Sprintf("%s-%d-%s", k, i, tag))
		res := appendRaw(t, l, keyedBatch(c, int64(1000+i), kv{k, v}))
		latest[k] = seenRecord{offset: res.BaseOffset, value: v}
	}
	return latest
}

func checkLatest(t *testing.T, got map[string]*seenRecord, want map[string]seenRecord) {
	t.Helper()
	for k, w := range want {
		g := got[k]
		if g == nil {
			t.Fatalf("key %s lost (want offset %d)", k, w.offset)
		}
		if g.offset != w.offset || !bytes.Equal(g.value, w.value) {
			t.Fatalf("key %s: last record at %d = %q, want %d = %q", k, g.offset, g.value, w.offset, w.value)
		}
	}
}

func TestCleanKeepsLatestValuePerKey(t *testing.T) {
	for _, c := range []record.Compression{record.CompressionNone, record.CompressionGzip, record.CompressionLZ4, record.CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			env := newEnv(t, compactConfig())
			m, l := env.openLog()
			defer m.Close()
			// Two-record batches where only one record survives force re-encoding.
			appendRaw(t, l, keyedBatch(c, 900, kv{"key-000", val("old")}, kv{"pair", val("pair-value")}))
			want := writeWorkload(t, l, c, 300, 20, "a")
			want["pair"] = seenRecord{offset: 1, value: val("pair-value")}
			forceRoll(t, l)
			segsBefore := l.NumSegments()
			stats, err := m.Clean("t", 0)
			if err != nil {
				t.Fatalf("Clean: %v", err)
			}
			if stats.EndOffset != l.LogEndOffset() || stats.RecordsRetained != 21 {
				t.Fatalf("stats %+v, log end %d", stats, l.LogEndOffset())
			}
			got, hdrs := readRecords(t, l)
			checkLatest(t, got, want)
			for k, g := range got {
				if g.count != 1 {
					t.Fatalf("key %s appears %d times", k, g.count)
				}
			}
			gaps := 0
			for i, h := range hdrs {
				if h.Compression() != c {
					t.Fatalf("batch %d: codec %v, want %v", i, h.Compression(), c)
				}
				if i > 0 && h.BaseOffset != hdrs[i-1].LastOffset()+1 {
					gaps++
				}
			}
			if gaps == 0 || stats.BytesWritten >= stats.BytesRead {
				t.Fatalf("gaps %d, bytes %d -> %d", gaps, stats.BytesRead, stats.BytesWritten)
			}

			// A read at an offset removed by compaction returns the next batch.
			rr, err := l.Read(5, 1<<20, l.EndPosition(), true)
			if err != nil || rr.Size == 0 || rr.FirstOffset <= 5 {
				t.Fatalf("read in a gap: %+v, %v", rr, err)
			}
			// Every cleaned segment's index is usable: lookups from every key's offset.
			for k, g := range got {
				rr, err := l.Read(g.offset, 1, l.EndPosition(), true)
				if err != nil || rr.Size == 0 {
					t.Fatalf("read key %s at %d: %v", k, g.offset, err)
				}
				buf := make([]byte, rr.Size)
				if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
					t.Fatal(err)
				}
				h, _ := record.ParseHeader(buf)
				if h.BaseOffset > g.offset || h.LastOffset() < g.offset {
					t.Fatalf("read at %d returned batch [%d, %d]", g.offset, h.BaseOffset, h.LastOffset())
				}
			}
			// The next pass merges the now small segments.
			writeWorkload(t, l, c, 20, 20, "b")
			forceRoll(t, l)
			if _, err := m.Clean("t", 0); err != nil {
				t.Fatal(err)
			}
			if l.NumSegments() >= segsBefore/2 {
				t.Fatalf("segments %d -> %d after a second pass", segsBefore, l.NumSegments())
			}
		})
	}
}

func TestCleanTombstonesAfterDeleteRetention(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 60000
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	appendRaw(t, l, keyedBatch(0, 1, kv{"a", val("1")}))
	appendRaw(t, l, keyedBatch(0, 2, kv{"b", val("1")}))
	appendRaw(t, l, keyedBatch(0, 3, kv{"a", nil}))
	forceRoll(t, l)
	clean := func() map[string]*seenRecord {
		t.Helper()
		if _, err := m.Clean("t", 0); err != nil {
			t.Fatalf("Clean: %v", err)
		}
		got, _ := readRecords(t, l)
		return got
	}
	got := clean()
	if g := got["a"]; g == nil || g.value != nil || g.count != 1 || got["b"] == nil {
		t.Fatalf("after first clean: a=%+v b=%+v, want only the tombstone of a and b", got["a"], got["b"])
	}
	env.clock.Advance(59 * time.Second)
	if got := clean(); got["a"] == nil {
		t.Fatal("tombstone removed before delete.retention.ms")
	}
	env.clock.Advance(2 * time.Second)
	got = clean()
	if got["a"] != nil || got["b"] == nil || string(got["b"].value) != "1" {
		t.Fatalf("after delete.retention.ms: a=%+v b=%+v, want a gone and b kept", got["a"], got["b"])
	}
}

func TestCleanMinCompactionLag(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCompactionLagMs = 100000
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	now := env.clock.Now().UnixMilli()
	for i := 0; i < 40; i++ { // old enough: timestamps near 0
		appendRaw(t, l, keyedBatch(0, int64(i), kv{"k", val(fmt.Sprint("old", i))}))
	}
	forceRoll(t, l)
	recentStart := l.LogEndOffset()
	for i := 0; i < 40; i++ { // newer than the lag
		appendRaw(t, l, keyedBatch(0, now-1000+int64(i), kv{"k", val(fmt.Sprint("new", i))}))
	}
	forceRoll(t, l)
	stats, err := m.Clean("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if stats.EndOffset != recentStart {
		t.Fatalf("cleaned up to %d, want %d (the first segment inside min.compaction.lag.ms)", stats.EndOffset, recentStart)
	}
	got, _ := readRecords(t, l)
	if got["k"].count != 41 { // one old survivor + 40 recent
		t.Fatalf("key k appears %d times, want 41", got["k"].count)
	}
	env.clock.Advance(200 * time.Second)
	if _, err := m.Clean("t", 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := readRecords(t, l); got["k"].count != 1 || string(got["k"].value) != "new39" {
		t.Fatalf("after the lag: %+v", got["k"])
	}
}

func TestCleanRespectsHighWatermark(t *testing.T) {
	env := newEnv(t, compactConfig())
	m, l := env.openLog()
	defer m.Close()
	writeWorkload(t, l, 0, 100, 5, "a")
	forceRoll(t, l)
	l.SetHighWatermark(0)
	stats, err := m.Clean("t", 0)
	if err != nil || stats.Segments != 0 {
		t.Fatalf("cleaned past the high watermark: %+v, %v", stats, err)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if stats, err := m.Clean("t", 0); err != nil || stats.Segments == 0 {
		t.Fatalf("nothing cleaned below the high watermark: %+v, %v", stats, err)
	}
}

func TestCleanerDirtyRatio(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 0.5
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	// Unique keys: cleaning keeps everything, so the clean part stays big.
	for i := 0; i < 200; i++ {
		appendRaw(t, l, keyedBatch(0, int64(i), kv{fmt.Sprint("u", i), val("v")}))
	}
	forceRoll(t, l)
	if !m.cleaner.cleanFilthiest() {
		t.Fatal("an all-dirty log was not cleaned")
	}
	checkpoint := func() int64 {
		m.cleaner.mu.Lock()
		defer m.cleaner.mu.Unlock()
		return m.cleaner.checkpoints[l.tp]
	}
	first := checkpoint()
	if first != l.LogEndOffset() {
		t.Fatalf("checkpoint %d, want %d", first, l.LogEndOffset())
	}
	for i := 0; i < 40; i++ {
		appendRaw(t, l, keyedBatch(0, int64(i), kv{"d", val("v")}))
	}
	forceRoll(t, l)
	if m.cleaner.cleanFilthiest() || checkpoint() != first {
		t.Fatal("cleaned below min.cleanable.dirty.ratio")
	}
	for i := 0; i < 300; i++ {
		appendRaw(t, l, keyedBatch(0, int64(i), kv{"d", val("v")}))
	}
	forceRoll(t, l)
	if !m.cleaner.cleanFilthiest() || checkpoint() != l.LogEndOffset() {
		t.Fatal("not cleaned above min.cleanable.dirty.ratio")
	}
}

func TestCleanerMaxCompactionLag(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 1
	cfg.MaxCompactionLagMs = 60000
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	now := env.clock.Now().UnixMilli()
	appendRaw(t, l, keyedBatch(0, now, kv{"u", val("v")}))
	forceRoll(t, l)
	if _, err := m.Clean("t", 0); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, keyedBatch(0, now, kv{"u", val("w")}))
	forceRoll(t, l)
	if m.cleaner.cleanFilthiest() {
		t.Fatal("cleaned before max.compaction.lag.ms with a ratio that cannot be reached")
	}
	env.clock.Advance(61 * time.Second)
	if !m.cleaner.cleanFilthiest() {
		t.Fatal("not cleaned after max.compaction.lag.ms")
	}
}

func TestCleanerThreadCompactsInBackground(t *testing.T) {
	cfg := compactConfig()
	cfg.FileDeleteDelayMs = 60000 // the test reads while passes keep swapping segments
	env := newEnv(t, cfg)
	mc := env.managerConfig()
	mc.CleanerEnable, mc.CleanerThreads, mc.CleanerBackoffMs = true, 2, 5
	m, err := OpenManager(mc, func(string) Config { return env.cfg })
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.GetOrCreate("t", 0, [16]byte{1}, env.cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := writeWorkload(t, l, 0, 300, 3, "a")
	forceRoll(t, l)
	waitFor(t, "background compaction", func() bool {
		got, _ := readRecords(t, l)
		return got["key-000"].count == 1
	})
	got, _ := readRecords(t, l)
	checkLatest(t, got, want)
}

func TestCleanConcurrentWithAppendsAndReads(t *testing.T) {
	cfg := compactConfig()
	cfg.FileDeleteDelayMs = 60000 // readers of replaced segments keep working
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	var mu sync.Mutex
	want := map[string]seenRecord{}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // appender
		defer wg.Done()
		defer done.Store(true)
		for i := 0; i < 1500; i++ {
			k := fmt.Sprintf("key-%02d", i%17)
			v := val(fmt.Sprint(k, "-", i))
			res, err := l.Append(keyedBatch(0, int64(i), kv{k, v}), AppendOptions{AssignOffsets: true})
			if err != nil {
				t.Errorf("append: %v", err)
				return
			}
			mu.Lock()
			want[k] = seenRecord{offset: res.BaseOffset, value: v}
			mu.Unlock()
		}
	}()
	go func() { // reader
		defer wg.Done()
		for !done.Load() {
			off := l.LogStartOffset()
			for off < l.LogEndOffset() {
				rr, err := l.Read(off, 4096, l.EndPosition(), true)
				if err != nil {
					t.Errorf("read at %d: %v", off, err)
					return
				}
				if rr.Size == 0 {
					break
				}
				buf := make([]byte, rr.Size)
				if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
					t.Errorf("read file: %v", err)
					return
				}
				for len(buf) > 0 {
					h, err := record.ParseHeader(buf)
					if err != nil || record.ComputeCRC(buf[:h.Size()]) != h.CRC {
						t.Errorf("bad batch at %d: %v", off, err)
						return
					}
					off = h.LastOffset() + 1
					buf = buf[h.Size():]
				}
			}
		}
	}()
	passes := 0
	for !done.Load() {
		if _, err := m.Clean("t", 0); err != nil {
			t.Fatalf("Clean: %v", err)
		}
		passes++
	}
	wg.Wait()
	forceRoll(t, l)
	if _, err := m.Clean("t", 0); err != nil {
		t.Fatal(err)
	}
	got, _ := readRecords(t, l)
	checkLatest(t, got, want)
	for k, g := range got {
		if g.count != 1 {
			t.Fatalf("key %s appears %d times after the final clean (%d passes)", k, g.count, passes)
		}
	}
}

// TestCleanCrashLeavesReadableLog stops a pass at each step of the swap as
// if the process died, and fails the write of the cleaned segment; after a
// reopen every latest value is there and cleaning works again.
func TestCleanCrashLeavesReadableLog(t *testing.T) {
	for _, step := range []string{"write-fails", "swap-created", "old-renamed", "log-renamed"} {
		t.Run(step, func(t *testing.T) {
			env := newEnv(t, compactConfig())
			efs := NewErrorFS(nil)
			env.fs = efs
			m, l := env.openLog()
			writeWorkload(t, l, record.CompressionLZ4, 200, 7, "a")
			forceRoll(t, l)
			// A first pass shrinks the segments so the crashed one merges several.
			if _, err := m.Clean("t", 0); err != nil {
				t.Fatal(err)
			}
			want := writeWorkload(t, l, record.CompressionLZ4, 100, 7, "b")
			forceRoll(t, l)
			if step == "write-fails" {
				efs.FailWrite(logSuffix+cleanedSuffix, 0, 10)
				if _, err := m.Clean("t", 0); !errors.Is(err, ErrInjected) {
					t.Fatalf("Clean with a failing write: %v", err)
				}
				if l.Offline() != nil {
					t.Fatalf("log offline after a failed cleaned-segment write: %v", l.Offline())
				}
				got, _ := readRecords(t, l)
				checkLatest(t, got, want)
			} else {
				m.cleaner.crashAt = func(s string) bool { return s == step }
				if _, err := m.Clean("t", 0); !errors.Is(err, errCleanAborted) {
					t.Fatalf("Clean: %v", err)
				}
			}
			crash(m)
			names, _ := os.ReadDir(env.partDir())
			var leftovers []string
			for _, e := range names {
				if strings.HasSuffix(e.Name(), swapSuffix) || strings.HasSuffix(e.Name(), deletedSuffix) {
					leftovers = append(leftovers, e.Name())
				}
			}
			t.Logf("files left by the crash: %v", leftovers)

			m2, l2 := env.openLog()
			defer m2.Close()
			got, _ := readRecords(t, l2)
			checkLatest(t, got, want)
			for _, e := range mustReadDir(t, env.partDir()) {
				if strings.HasSuffix(e, swapSuffix) || strings.HasSuffix(e, cleanedSuffix) {
					t.Fatalf("leftover %s after reopen", e)
				}
			}
			if _, err := m2.Clean("t", 0); err != nil {
				t.Fatalf("Clean after reopen: %v", err)
			}
			got, _ = readRecords(t, l2)
			checkLatest(t, got, want)
			for k, g := range got {
				if g.count != 1 {
					t.Fatalf("key %s appears %d times", k, g.count)
				}
			}
		})
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestCleanReopenAndCheckpoint(t *testing.T) {
	env := newEnv(t, compactConfig())
	m, l := env.openLog()
	want := writeWorkload(t, l, 0, 150, 4, "a")
	forceRoll(t, l)
	stats, err := m.Clean("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(env.dir, cleanerCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if wantText := fmt.Sprintf("0\n1\nt 0 %d\n", stats.EndOffset); string(data) != wantText {
		t.Fatalf("checkpoint file %q, want %q", data, wantText)
	}
	m2, l2 := env.openLog()
	defer m2.Close()
	got, _ := readRecords(t, l2)
	checkLatest(t, got, want)
	more := writeWorkload(t, l2, 0, 50, 4, "b")
	forceRoll(t, l2)
	stats2, err := m2.Clean("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if stats2.FirstDirtyOffset != stats.EndOffset {
		t.Fatalf("second pass started at %d, want the checkpoint %d", stats2.FirstDirtyOffset, stats.EndOffset)
	}
	got, _ = readRecords(t, l2)
	checkLatest(t, got, more)
}

func TestCleanerCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, cleanerCheckpointFile)
	in := map[TopicPartition]int64{{"a", 0}: 10, {"a", 3}: 0, {"b.c", 12}: 1 << 40}
	if err := writeFileAtomic(OSFS, path, encodeOffsetCheckpoint(in)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "0\n3\na 0 10\na 3 0\nb.c 12 1099511627776\n"; string(data) != want {
		t.Fatalf("file %q, want %q", data, want)
	}
	out, err := readOffsetCheckpoint(OSFS, path)
	if err != nil || len(out) != 3 || out[TopicPartition{"b.c", 12}] != 1<<40 || out[TopicPartition{"a", 3}] != 0 {
		t.Fatalf("read back %v, %v", out, err)
	}
	// A manager loads it and keeps entries of partitions it holds.
	env := newEnv(t, compactConfig())
	m, _ := env.openLog()
	m.cleaner.mu.Lock()
	m.cleaner.checkpoints[TopicPartition{"t", 0}] = 0
	m.cleaner.mu.Unlock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.dir, cleanerCheckpointFile), []byte("0\n1\nt 0 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m2 := env.open()
	defer m2.Close()
	if got := m2.cleaner.checkpoints[TopicPartition{"t", 0}]; got != 7 {
		t.Fatalf("loaded checkpoint %d, want 7", got)
	}
}

func TestCleanKeepsLastBatchOfProducer(t *testing.T) {
	env := newEnv(t, compactConfig())
	m, l := env.openLog()
	defer m.Close()
	idem := record.BuildBatch(record.BuildOptions{Idempotent: true, ProducerID: 7, ProducerEpoch: 0, BaseSequence: 0},
		[]record.Record{{Key: val("a"), Value: val("1")}, {Key: val("b"), Value: val("1"), OffsetDelta: 1}})
	res := appendRaw(t, l, idem)
	appendRaw(t, l, keyedBatch(0, 5, kv{"a", val("2")}, kv{"b", val("2")}))
	forceRoll(t, l)
	if _, err := m.Clean("t", 0); err != nil {
		t.Fatal(err)
	}
	got, hdrs := readRecords(t, l)
	if string(got["a"].value) != "2" || got["a"].count != 1 {
		t.Fatalf("a: %+v", got["a"])
	}
	h := hdrs[0]
	if h.ProducerID != 7 || h.RecordCount != 0 || h.BaseOffset != res.BaseOffset || h.LastOffset() != res.LastOffset || h.BaseSequence != 0 {
		t.Fatalf("producer's emptied last batch not kept as an empty batch: %+v", h)
	}
	// The producer continues its sequence.
	next := record.BuildBatch(record.BuildOptions{Idempotent: true, ProducerID: 7, BaseSequence: 2},
		[]record.Record{{Key: val("c"), Value: val("1")}})
	if _, err := l.Append(next, AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatalf("producer append after cleaning: %v", err)
	}
}

func TestRetentionOnlyWithDeletePolicy(t *testing.T) {
	cfg := compactConfig()
	cfg.RetentionBytes = 0
	env := newEnv(t, cfg)
	m, l := env.openLog()
	defer m.Close()
	writeWorkload(t, l, 0, 100, 100, "a")
	forceRoll(t, l)
	if n, err := l.EnforceRetention(env.clock.Now()); err != nil || n != 0 {
		t.Fatalf("retention deleted %d segments of a compact-only log: %v", n, err)
	}
	cfg.Delete = true
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if n, err := l.EnforceRetention(env.clock.Now()); err != nil || n == 0 {
		t.Fatalf("retention with compact,delete deleted %d: %v", n, err)
	}
}

// readCompacted reads every batch from the log start; unlike readAll it
// accepts that compaction left no batch between an offset and the log end.
func readCompacted(t *testing.T, l *Log) [][]byte {
	t.Helper()
	var out [][]byte
	off := l.LogStartOffset()
	for off < l.LogEndOffset() {
		rr, err := l.Read(off, 1<<20, l.EndPosition(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if rr.Size == 0 {
			break
		}
		buf := make([]byte, rr.Size)
		if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
			t.Fatalf("read file at %d: %v", rr.Pos, err)
		}
		for len(buf) > 0 {
			h, err := record.ParseHeader(buf)
			if err != nil || h.Size() > int64(len(buf)) {
				t.Fatalf("bad batch in read result at offset %d: %v", off, err)
			}
			out = append(out, buf[:h.Size()])
			off = h.LastOffset() + 1
			buf = buf[h.Size():]
		}
	}
	return out
}

// BenchmarkClean measures a cleaning pass over 64 MiB of 1 KiB records
// (batches of 16) spread over 1000 keys; MB/s is of the log read.
func BenchmarkClean(b *testing.B) {
	const total, recSize, perBatch, keys = 64 << 20, 1024, 16, 1000
	cfg := DefaultConfig()
	cfg.Compact, cfg.Delete = true, false
	cfg.SegmentBytes = 16 << 20
	value := bytes.Repeat([]byte{'v'}, recSize-16)
	batches := make([][]byte, 0, total/recSize/perBatch)
	n := 0
	for len(batches) < cap(batches) {
		recs := make([]kv, perBatch)
		for i := range recs {
			recs[i] = kv{fmt.Sprintf("key-%06d", (n*7919)%keys), value}
			n++
		}
		batches = append(batches, keyedBatch(record.CompressionNone, int64(n), recs...))
	}
	b.SetBytes(total)
	for b.Loop() {
		b.StopTimer()
		m, l := benchLog(b, cfg)
		for _, batch := range batches {
			if _, err := l.Append(bytes.Clone(batch), AppendOptions{AssignOffsets: true}); err != nil {
				b.Fatal(err)
			}
		}
		l.mu.Lock()
		if _, err := l.rollLocked(l.LogEndOffset()); err != nil {
			b.Fatal(err)
		}
		l.mu.Unlock()
		b.StartTimer()
		stats, err := m.Clean("bench", 0)
		if err != nil || stats.RecordsRetained != keys {
			b.Fatalf("clean: %+v, %v", stats, err)
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}
