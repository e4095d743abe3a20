package storage

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// preadFS counts ReadAt calls on .log files.
type preadFS struct {
	FS
	reads atomic.Int64
}

func (f *preadFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return &preadFile{File: file, fs: f}, nil
}

type preadFile struct {
	File
	fs *preadFS
}

func (f *preadFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.reads.Add(1)
	return f.File.ReadAt(p, off)
}

// openPreadCountedLog opens a log of one large segment, indexed every
// 512 bytes, whose segment reads fs counts.
func openPreadCountedLog(t *testing.T) (*Manager, *Log, *preadFS) {
	t.Helper()
	cfg := tinyConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 512
	cfg.MaxIndexSize = 1 << 20 // one segment
	e := newEnv(t, cfg)
	fs := &preadFS{FS: OSFS}
	e.fs = fs
	m, l := e.openLog()
	return m, l, fs
}

// A follower or a consumer that keeps up reads each new batch right after
// its append: those Reads take the batches' bounds from the tail ring and
// read nothing from the segment file, and they return what the index
// lookup and header scan return, also when the read stops at a high
// watermark below the log end or at a byte limit, and when it starts
// before the batches the ring remembers.
func TestTailReadsReadNoHeaders(t *testing.T) {
	m, l, fs := openPreadCountedLog(t)
	defer m.Close()
	defer func() {
		if l.NumSegments() != 1 {
			t.Errorf("the log rolled: %d segments", l.NumSegments())
		}
	}()

	next := int64(0)
	for i := range 3 * tailBatches {
		appendN(t, l, 1, func(int) batchSpec { return batchSpec{records: 1 + i%3, valueSize: 30 + i*7} })
		before := fs.reads.Load()
		got := mustRead(t, l, next, 1<<20, l.EndPosition())
		if n := fs.reads.Load() - before; n != 0 {
			t.Fatalf("read of the newest batch at %d: %d preads, want 0", next, n)
		}
		if want := referenceRead(t, l, next, 1<<20, l.EndPosition(), true); got != want {
			t.Fatalf("read at %d = %+v, want %+v", next, got, want)
		}
		next = l.LogEndOffset()
	}

	end := l.LogEndOffset()
	hw, err := l.PositionOf(end - 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		offset   int64
		maxBytes int32
		upTo     Position
		preads   bool
	}{
		{"several newest batches", end - 12, 1 << 20, l.EndPosition(), false},
		{"up to a high watermark", end - 12, 1 << 20, hw, false},
		{"a byte limit", end - 20, 300, l.EndPosition(), false},
		{"from before the ring", 3, 1 << 20, l.EndPosition(), true},
	} {
		before := fs.reads.Load()
		got := mustRead(t, l, c.offset, c.maxBytes, c.upTo)
		n := fs.reads.Load() - before
		if want := referenceRead(t, l, c.offset, c.maxBytes, c.upTo, true); got != want {
			t.Errorf("%s: read at %d = %+v, want %+v", c.name, c.offset, got, want)
		}
		if (n > 0) != c.preads {
			t.Errorf("%s: %d preads", c.name, n)
		}
	}
}

// Truncation and a roll void the ring: reads afterwards return the new
// batches, never a remembered position of the old ones.
func TestTailRingVoidedByTruncationAndRoll(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 4096
	m, l := newEnv(t, cfg).openLog()
	defer m.Close()
	appendN(t, l, 10, func(int) batchSpec { return batchSpec{records: 2, valueSize: 100} })
	cut := l.LogEndOffset() - 6
	if err := l.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 40, func(int) batchSpec { return batchSpec{records: 5, valueSize: 9, fill: 'x'} })
	if l.NumSegments() < 2 {
		t.Fatalf("want a roll, have %d segments", l.NumSegments())
	}
	for off := cut - 4; off < l.LogEndOffset(); off += 3 {
		got := mustRead(t, l, off, 1<<20, l.EndPosition())
		if want := referenceRead(t, l, off, 1<<20, l.EndPosition(), true); got != want {
			t.Fatalf("read at %d = %+v, want %+v", off, got, want)
		}
	}
}

// PositionOf an offset among the newest batches (the high watermark a
// follower's fetch moves, a few batches behind the log end) takes the
// batch's place from the tail ring, reading no header, and agrees with
// where the batch was appended; an older offset is looked up in the file.
func TestTailPositionOfReadsNoHeaders(t *testing.T) {
	m, l, fs := openPreadCountedLog(t)
	defer m.Close()
	var starts []Position // where each batch was appended
	for i := range 2 * tailBatches {
		starts = append(starts, l.EndPosition())
		appendN(t, l, 1, func(int) batchSpec { return batchSpec{records: 3, valueSize: 20 + i} })
	}
	for i, start := range starts {
		for _, off := range []int64{start.Offset, start.Offset + 2} { // the batch's first and last record
			before := fs.reads.Load()
			got, err := l.PositionOf(off)
			n := fs.reads.Load() - before
			if want := (Position{Offset: off, SegmentBase: start.SegmentBase, Pos: start.Pos}); err != nil || got != want {
				t.Fatalf("PositionOf(%d) = %+v %v, want %+v", off, got, err, want)
			}
			if recent := i >= len(starts)-tailBatches; recent != (n == 0) {
				t.Errorf("PositionOf(%d), batch %d of %d: %d preads", off, i, len(starts), n)
			}
		}
	}
}
