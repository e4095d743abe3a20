package storage

import "sync"

// tailBatches is how many of the newest batches a log remembers.
const tailBatches = 32

// tailRing remembers the bounds of the last batches appended to the active
// segment, so that a Read near the log end (a follower's fetch, a consumer
// that keeps up) finds its batches without reading their headers back from
// the file: at the log end a fetch costs its sendfile and no pread. The
// batches are contiguous in the file, oldest first from head. The ring
// holds for the segment list it was filled under (a roll, retention, the
// cleaner and truncation store a new one) and the truncation count then,
// as readHint does; truncation also empties it.
type tailRing struct {
	mu   sync.Mutex
	segs *[]*segment
	gen  uint64
	head int // index of the oldest batch
	n    int
	b    [tailBatches]batchBounds
}

// add records b, just written to the last segment of segs. Called with the
// log's mu held (so gen is even and stable).
func (t *tailRing) add(segs *[]*segment, gen uint64, b batchBounds) {
	t.mu.Lock()
	if t.segs != segs || t.gen != gen || (t.n > 0 && t.b[(t.head+t.n-1)%tailBatches].end() != b.pos) {
		t.segs, t.gen, t.head, t.n = segs, gen, 0, 0
	}
	if t.n == tailBatches {
		t.b[t.head] = b
		t.head = (t.head + 1) % tailBatches
	} else {
		t.b[(t.head+t.n)%tailBatches] = b
		t.n++
	}
	t.mu.Unlock()
}

// reset forgets every batch (truncation).
func (t *tailRing) reset() {
	t.mu.Lock()
	t.segs, t.n = nil, 0
	t.mu.Unlock()
}

// find returns the first remembered batch of segment i of segs whose last
// offset is >= offset, when the ring covers offset: the oldest remembered
// batch starts at or before it. gen is the reader's truncation count.
func (t *tailRing) find(segs *[]*segment, gen uint64, i int, offset int64) (batchBounds, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.validFor(segs, gen, i) || offset < t.b[t.head].baseOffset {
		return batchBounds{}, false
	}
	for k := range t.n {
		if b := t.b[(t.head+k)%tailBatches]; b.lastOffset >= offset {
			return b, true
		}
	}
	return batchBounds{}, false
}

// at returns the remembered batch of segment i of segs that starts at pos.
func (t *tailRing) at(segs *[]*segment, gen uint64, i int, pos int64) (batchBounds, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.validFor(segs, gen, i) || pos < t.b[t.head].pos {
		return batchBounds{}, false
	}
	for k := range t.n {
		if b := t.b[(t.head+k)%tailBatches]; b.pos == pos {
			return b, true
		} else if b.pos > pos {
			break
		}
	}
	return batchBounds{}, false
}

// validFor reports whether the ring describes segment i of segs as a
// reader with truncation count gen sees it. Called with t.mu held.
func (t *tailRing) validFor(segs *[]*segment, gen uint64, i int) bool {
	return t.n > 0 && gen&1 == 0 && t.segs == segs && t.gen == gen && i == len(*segs)-1
}

func (b batchBounds) end() int64 { return b.pos + b.size }
