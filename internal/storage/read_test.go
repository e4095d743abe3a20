package storage

import (
	"testing"
)

// referenceRead is l.Read without the read hint and the tail ring: what
// the index lookup and header scan find.
func referenceRead(t *testing.T, l *Log, offset int64, maxBytes int32, upTo Position, minOne bool) ReadResult {
	t.Helper()
	l.hintMu.Lock()
	saved := l.hint
	l.hint = readHint{}
	l.hintMu.Unlock()
	l.tail.mu.Lock()
	savedTail := l.tail.segs
	l.tail.segs = nil // matches no segment list: the ring is not used
	l.tail.mu.Unlock()
	rr, err := l.Read(offset, maxBytes, upTo, minOne)
	if err != nil {
		t.Fatalf("reference read at %d: %v", offset, err)
	}
	l.hintMu.Lock()
	l.hint = saved
	l.hintMu.Unlock()
	l.tail.mu.Lock()
	l.tail.segs = savedTail
	l.tail.mu.Unlock()
	return rr
}

// hinted reports whether a Read at offset would start from the read hint.
func hinted(l *Log, offset int64) bool {
	i := max(len(*l.segs.Load())-1, 0)
	for i > 0 && (*l.segs.Load())[i].base > offset {
		i--
	}
	_, ok := l.hintFor(l.segs.Load(), l.truncations.Load(), i, offset)
	return ok
}

// A consumer reading a log from the start with a byte limit smaller than
// the log gets the same answers as without the read hint, across
// segments, and every Read that continues a previous one that stopped
// before a batch starts from the hint.
func TestReadHintFollowsConsumer(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 4096
	cfg.IndexIntervalBytes = 512
	m, l := newEnv(t, cfg).openLog()
	defer m.Close()
	appendN(t, l, 60, func(i int) batchSpec {
		return batchSpec{records: 1 + i%4, valueSize: 20 + (i*37)%150}
	})
	if l.NumSegments() < 3 {
		t.Fatalf("want several segments, have %d", l.NumSegments())
	}
	for _, maxBytes := range []int32{1, 300, 700, 2000} {
		used := 0
		off := int64(0)
		for off < l.LogEndOffset() {
			want := referenceRead(t, l, off, maxBytes, l.EndPosition(), true)
			if hinted(l, off) {
				used++
			}
			got, err := l.Read(off, maxBytes, l.EndPosition(), true)
			if err != nil {
				t.Fatalf("read at %d: %v", off, err)
			}
			if got != want {
				t.Fatalf("maxBytes %d: read at %d = %+v, without the hint %+v", maxBytes, off, got, want)
			}
			if got.Size == 0 {
				t.Fatalf("maxBytes %d: empty read at %d below log end %d", maxBytes, off, l.LogEndOffset())
			}
			batches := readAll(t, l, off, maxBytes)
			if len(batches) == 0 {
				t.Fatalf("no batch at %d", off)
			}
			// Continue after the batches of this read, as a consumer does.
			buf := make([]byte, got.Size)
			if _, err := got.File.ReadAt(buf, got.Pos); err != nil {
				t.Fatalf("read file: %v", err)
			}
			for len(buf) > 0 {
				h := makeHeaderFrom(buf)
				off = h.LastOffset() + 1
				buf = buf[h.Size():]
			}
		}
		if maxBytes >= 300 && used == 0 {
			t.Errorf("maxBytes %d: no read started from the hint", maxBytes)
		}
	}
	// A read from the middle of the hinted batch starts with it too, and
	// one stopped by upTo below the hinted batch does not return it.
	rr, err := l.Read(0, 300, l.EndPosition(), true)
	if err != nil || rr.Size == 0 {
		t.Fatalf("read at 0: %+v, %v", rr, err)
	}
	l.hintMu.Lock()
	hb := l.hint.batch
	l.hintMu.Unlock()
	if hb.lastOffset > hb.baseOffset {
		mid := hb.baseOffset + 1
		if got, want := mustRead(t, l, mid, 300, l.EndPosition()), referenceRead(t, l, mid, 300, l.EndPosition(), true); got != want {
			t.Fatalf("read at %d inside the hinted batch = %+v, want %+v", mid, got, want)
		}
	}
	rr, _ = l.Read(0, 300, l.EndPosition(), true)
	l.hintMu.Lock()
	hb = l.hint.batch
	l.hintMu.Unlock()
	upTo, err := l.PositionOf(hb.baseOffset)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, l, hb.baseOffset, 300, upTo); got.Size != 0 {
		t.Fatalf("read at %d up to %+v returned %d bytes", hb.baseOffset, upTo, got.Size)
	}
}

func mustRead(t *testing.T, l *Log, offset int64, maxBytes int32, upTo Position) ReadResult {
	t.Helper()
	rr, err := l.Read(offset, maxBytes, upTo, true)
	if err != nil {
		t.Fatalf("read at %d: %v", offset, err)
	}
	return rr
}

// A truncation (a follower that diverged) voids the hint: after new
// batches of other sizes are written where the hinted batch was, a Read at
// its offset returns the new batches.
func TestReadHintVoidedByTruncation(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 1 << 20
	m, l := newEnv(t, cfg).openLog()
	defer m.Close()
	appendN(t, l, 20, func(i int) batchSpec { return batchSpec{records: 2, valueSize: 100} })
	rr := mustRead(t, l, 0, 1000, l.EndPosition())
	if rr.Size == 0 {
		t.Fatal("empty read")
	}
	l.hintMu.Lock()
	hb := l.hint.batch
	l.hintMu.Unlock()
	if !hinted(l, hb.baseOffset) {
		t.Fatalf("no hint after a read stopped by its byte limit")
	}
	if err := l.TruncateTo(hb.baseOffset - 2); err != nil {
		t.Fatalf("truncate: %v", err)
	}
	if hinted(l, hb.baseOffset) {
		t.Fatalf("hint survives truncation")
	}
	appendN(t, l, 10, func(i int) batchSpec { return batchSpec{records: 5, valueSize: 7, fill: 'x'} })
	got := mustRead(t, l, hb.baseOffset, 1000, l.EndPosition())
	want := referenceRead(t, l, hb.baseOffset, 1000, l.EndPosition(), true)
	if got != want {
		t.Fatalf("read at %d after truncation = %+v, want %+v", hb.baseOffset, got, want)
	}
	if got.Pos == hb.pos && got.Size > 0 {
		// The new batch holding the offset starts 2 offsets earlier, so
		// at the same position only by a stale hint.
		t.Fatalf("read after truncation starts at the stale hinted position %d", hb.pos)
	}
}
