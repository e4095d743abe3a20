package storage

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// countFS counts OpenFile calls per file-name suffix.
type countFS struct {
	FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	c.mu.Lock()
	for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if strings.HasSuffix(name, suf) {
			c.opens[suf]++
		}
	}
	c.mu.Unlock()
	return c.FS.OpenFile(name, flag, perm)
}

func (c *countFS) count(suffix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[suffix]
}

// openHandles counts the segments of l whose .log is open.
func openHandles(l *Log) int {
	n := 0
	for _, s := range l.segments() {
		if s.log.(*segFile).isOpen() {
			n++
		}
	}
	return n
}

func TestOpenSegmentFilesAreBounded(t *testing.T) {
	e := newEnv(t, tinyConfig())
	mc := e.managerConfig()
	mc.MaxOpenSegmentFiles = 3
	mc.IndexCacheBytes = 1 // every load evicts the others
	m, err := OpenManager(mc, func(string) Config { return e.cfg })
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.GetOrCreate("t", 0, [16]byte{1}, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := appendN(t, l, 300, variedSpec)
	if l.NumSegments() < 20 {
		t.Fatalf("only %d segments", l.NumSegments())
	}
	// The active segment plus at most 3 inactive ones.
	if n := openHandles(l); n > 4 {
		t.Fatalf("%d segment files open after appends, want at most 4", n)
	}
	checkBatches(t, readAll(t, l, 0, 1), want)
	if n := openHandles(l); n > 4 {
		t.Fatalf("%d segment files open after reading every segment, want at most 4", n)
	}
	if !l.segments()[len(l.segments())-1].log.(*segFile).isOpen() {
		t.Fatal("the active segment's file was closed")
	}
	// Rolled segments keep no index entries in memory; loaded ones are
	// dropped by the byte budget (one at most survives its own load).
	loaded := 0
	for _, s := range l.segments()[:l.NumSegments()-1] {
		s.index.mu.RLock()
		if s.index.tail != nil {
			t.Errorf("segment %d keeps %d index entries in its tail", s.base, len(s.index.tail))
		}
		if s.index.pages != nil {
			loaded++
		}
		s.index.mu.RUnlock()
	}
	if loaded > 1 {
		t.Fatalf("%d inactive segments hold loaded index entries with a 1-byte budget", loaded)
	}
}

func TestReadResultSurvivesEviction(t *testing.T) {
	e := newEnv(t, tinyConfig())
	mc := e.managerConfig()
	mc.MaxOpenSegmentFiles = 1
	m, err := OpenManager(mc, func(string) Config { return e.cfg })
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.GetOrCreate("t", 0, [16]byte{1}, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := appendN(t, l, 100, variedSpec)
	rr, err := l.Read(0, 1<<20, l.EndPosition(), true)
	if err != nil || rr.Size == 0 {
		t.Fatalf("read: %+v %v", rr, err)
	}
	h := rr.File.(*segFile)
	// Reading the other segments evicts the first one's handle.
	readAll(t, l, l.segments()[2].base, 1)
	if h.isOpen() {
		t.Fatal("the first segment's file is still open with a bound of 1")
	}
	buf := make([]byte, rr.Size)
	if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
		t.Fatalf("ReadAt after eviction: %v", err)
	}
	if !bytes.HasPrefix(buf, want[0]) {
		t.Fatal("ReadAt after eviction returned other bytes")
	}
	// A sendfile holds its descriptor: eviction attempts during Control
	// must not close it.
	sc, ok := rr.File.(syscall.Conn)
	if !ok {
		t.Fatal("a segment file on the OS file system is not a syscall.Conn")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var perr error
	got := make([]byte, rr.Size)
	cerr := rc.Control(func(fd uintptr) {
		readAll(t, l, l.segments()[2].base, 1) // tries to evict h
		_, perr = syscall.Pread(int(fd), got, rr.Pos)
	})
	if cerr != nil || perr != nil {
		t.Fatalf("Control: %v, pread: %v", cerr, perr)
	}
	if !bytes.Equal(got, buf) {
		t.Fatal("pread on the held descriptor returned other bytes")
	}
}

func TestCleanStartReadsNoInactiveSegment(t *testing.T) {
	cfg := tinyConfig()
	cfg.RetentionMs = 60_000
	e := newEnv(t, cfg)
	m, l := e.openLog()
	start := e.clock.Now().UnixMilli()
	want := appendN(t, l, 200, func(i int) batchSpec {
		s := variedSpec(i)
		s.ts = start + int64(i)*1000 // one batch a second
		return s
	})
	segs := l.NumSegments()
	leo := l.LogEndOffset()
	probe := start + 150_500
	wantOff, wantTs, _, err := l.OffsetForTimestamp(probe)
	if err != nil {
		t.Fatal(err)
	}
	wantMaxOff, wantMaxTs, _, err := l.MaxTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{FS: OSFS, opens: map[string]int{}}
	e.fs = cfs
	m2 := e.open()
	defer m2.Close()
	l2 := m2.Get("t", 0)
	if l2.NumSegments() != segs || l2.LogEndOffset() != leo {
		t.Fatalf("reopened with %d segments, end %d; want %d, %d", l2.NumSegments(), l2.LogEndOffset(), segs, leo)
	}
	// The active segment: its .log, and the last entry of each index.
	if n := cfs.count(logSuffix); n > 1 {
		t.Errorf("%d .log files opened at a clean start, want 1 (the active segment)", n)
	}
	if n := cfs.count(indexSuffix) + cfs.count(timeIndexSuffix); n > 2 {
		t.Errorf("%d index files opened at a clean start, want only the active segment's", n)
	}
	for _, s := range l2.segments()[:segs-1] {
		if !s.statsPending {
			t.Fatalf("segment %d stats were loaded at open", s.base)
		}
	}
	checkBatches(t, readAll(t, l2, 0, 1<<20), want)
	// Stats load on demand: timestamps, then time retention.
	off, ts, found, err := l2.OffsetForTimestamp(probe)
	if err != nil || !found || off != wantOff || ts != wantTs {
		t.Fatalf("OffsetForTimestamp after a clean start = %d, %d, %v, %v; want %d, %d", off, ts, found, err, wantOff, wantTs)
	}
	maxOff, maxTs, _, err := l2.MaxTimestamp()
	if err != nil || maxOff != wantMaxOff || maxTs != wantMaxTs {
		t.Fatalf("MaxTimestamp after a clean start = %d, %d, %v; want %d, %d", maxOff, maxTs, err, wantMaxOff, wantMaxTs)
	}
	l2.SetHighWatermark(leo)
	n, err := l2.EnforceRetention(time.UnixMilli(start + 200_000 + 60_000))
	if err != nil || n == 0 {
		t.Fatalf("time retention after a clean start deleted %d segments: %v", n, err)
	}
	if lso := l2.LogStartOffset(); lso == 0 {
		t.Fatalf("log start offset stayed 0 after time retention")
	}
}

func TestCleanStartRestoresTransactionsFromSnapshot(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	app := func(b []byte) {
		t.Helper()
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	seq := int32(0)
	for i := range 30 { // many segments: every batch is ~70 bytes, a segment 2 KiB
		app(txnBatch(1, 0, seq, 5))
		seq += 5
		app(txnBatch(2, 0, int32(i), 1))
		if i%3 == 0 {
			app(markerBatch(1, 0, MarkerAbort))
		} else {
			app(markerBatch(1, 0, MarkerCommit))
		}
	}
	app(txnBatch(1, 0, seq, 1)) // producer 1 open again; producer 2 open all along
	wantAborted := l.AbortedTransactions(0, l.LogEndOffset())
	wantFirst, _ := l.FirstUnstableOffset()
	wantProducers := l.Producers()
	if len(wantAborted) != 10 || l.NumSegments() < 5 {
		t.Fatalf("setup: %d aborted transactions, %d segments", len(wantAborted), l.NumSegments())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{FS: OSFS, opens: map[string]int{}}
	e.fs = cfs
	m2 := e.open()
	defer m2.Close()
	l2 := m2.Get("t", 0)
	if n := cfs.count(logSuffix); n > 1 {
		t.Errorf("%d .log files opened at a clean start, want only the active one", n)
	}
	if got := l2.AbortedTransactions(0, l2.LogEndOffset()); !slices.Equal(got, wantAborted) {
		t.Fatalf("aborted after reopen %+v, want %+v", got, wantAborted)
	}
	if got, ok := l2.FirstUnstableOffset(); !ok || got != wantFirst {
		t.Fatalf("first unstable offset after reopen %d %v, want %d", got, ok, wantFirst)
	}
	if got := l2.Producers(); !slices.Equal(got, wantProducers) {
		t.Fatalf("producers after reopen %+v, want %+v", got, wantProducers)
	}
}

func TestSnapshotVersions(t *testing.T) {
	ps := newProducerState()
	h := makeHeader(t, batchSpec{pid: 7, epoch: 1, seq: 0, records: 3})
	ps.update(&h, 10)
	ts := newTxnState()
	ts.ongoing[7] = 10
	ts.aborted = []AbortedTxn{{ProducerID: 3, FirstOffset: 1, LastOffset: 5}}
	ts.coordinatorEpochs[3] = 9
	gotPS, gotTS, err := decodeSnapshot(ps.encodeWith(ts))
	if err != nil {
		t.Fatal(err)
	}
	if len(gotPS.producers) != 1 || gotTS == nil || gotTS.ongoing[7] != 10 || !slices.Equal(gotTS.aborted, ts.aborted) || gotTS.coordinatorEpochs[3] != 9 {
		t.Fatalf("round trip: %+v %+v", gotPS.producers, gotTS)
	}
	// Version 1 has no transaction state: the open rebuilds it.
	if _, gotTS, err := decodeSnapshot(ps.encode()); err != nil || gotTS != nil {
		t.Fatalf("version 1: %+v %v", gotTS, err)
	}
	b := ps.encodeWith(ts)
	if _, _, err := decodeSnapshot(b[:len(b)-3]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated snapshot: %v", err)
	}
}

// An active segment with more index entries than it keeps in memory
// writes them out as it goes; lookups below the tail use the file's
// entries (kept in the cache, extended in place by later writes) and the
// segment reads back the same after a clean restart and after a crash.
func TestActiveIndexWrittenInChunks(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 1 // an entry for every batch
	e := newEnv(t, cfg)
	m, l := e.openLog()
	n := 3*indexTailEntries + 100
	want := appendN(t, l, n/2, variedSpec)
	// Load the written entries into the cache, then append more: the
	// loaded entries grow in place.
	checkEveryOffset(t, l, want[:10])
	want = append(want, appendN(t, l, n-n/2, func(i int) batchSpec { return variedSpec(i + n/2) })...)
	if l.NumSegments() != 1 {
		t.Fatalf("%d segments, want 1", l.NumSegments())
	}
	s := l.segments()[0]
	s.index.mu.RLock()
	persisted, tail := s.index.persisted, len(s.index.tail)
	s.index.mu.RUnlock()
	if persisted == 0 || tail >= indexTailEntries || persisted+tail != n-1 {
		t.Fatalf("index: %d entries written, %d in memory, want %d in all, under %d in memory", persisted, tail, n-1, indexTailEntries)
	}
	if fi, err := os.Stat(s.path(indexSuffix)); err != nil || fi.Size() != int64(persisted*offsetEntrySize) {
		t.Fatalf("index file: %v, %v; want %d bytes", fi, err, persisted*offsetEntrySize)
	}
	ents := indexEntries(t, s)
	buf := make([]byte, batchPrefix)
	for _, ent := range ents {
		b, err := s.readBounds(int64(ent.pos), s.size.Load(), buf)
		if err != nil || b.lastOffset != s.base+int64(ent.rel) {
			t.Fatalf("entry %+v does not match batch %+v (%v)", ent, b, err)
		}
	}
	checkEveryOffset(t, l, want)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, l = e.openLog()
	checkEveryOffset(t, l, want)
	if got := l.segments()[0].index.len(); got != n-1 {
		t.Fatalf("%d index entries after a clean restart, want %d", got, n-1)
	}
	more := appendN(t, l, 10, func(i int) batchSpec { return variedSpec(i + n) })
	crash(m)
	m, l = e.openLog()
	defer m.Close()
	checkEveryOffset(t, l, append(want, more...))
	if got := l.segments()[0].index.len(); got != n+9 {
		t.Fatalf("%d index entries after recovery, want %d", got, n+9)
	}
}
