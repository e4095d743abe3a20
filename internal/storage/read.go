package storage

import (
	"fmt"
	"sort"
	"sync"
)

// readHint remembers the batch a Read stopped before (it did not fit the
// byte limit): its bounds, the segment list and segment index it lies in,
// and the truncation count when it was taken. A consumer that is behind
// asks next for that batch's base offset (the offset after the last one
// it got), and that Read starts at the remembered batch instead of looking
// the offset up in the index and reading batch headers: one header read
// per Read instead of two. The hint holds while the log's segment list is
// the same slice (a roll, retention, the cleaner and truncation all store
// a new one) and no TruncateTo began since: bytes below a segment's size
// are otherwise never rewritten.
type readHint struct {
	segs  *[]*segment
	gen   uint64
	seg   int
	batch batchBounds
}

// headerBufs holds the buffers Read reads batch headers into
// (*[batchPrefix]byte), so that a Read allocates nothing.
var headerBufs = sync.Pool{New: func() any { return new([batchPrefix]byte) }}

// hintFor returns the hinted batch when offset lies in it and it is valid
// for segs (segment i) and truncation count gen.
func (l *Log) hintFor(segs *[]*segment, gen uint64, i int, offset int64) (batchBounds, bool) {
	if gen&1 != 0 {
		return batchBounds{}, false
	}
	l.hintMu.Lock()
	h := l.hint
	l.hintMu.Unlock()
	if h.segs != segs || h.gen != gen || h.seg != i || offset < h.batch.baseOffset || offset > h.batch.lastOffset {
		return batchBounds{}, false
	}
	return h.batch, true
}

// setHint records b, in segment i of segs, as the batch the next Read will
// likely start with.
func (l *Log) setHint(segs *[]*segment, gen uint64, i int, b batchBounds) {
	if gen&1 != 0 {
		return
	}
	l.hintMu.Lock()
	l.hint = readHint{segs: segs, gen: gen, seg: i, batch: b}
	l.hintMu.Unlock()
}

// Read returns whole batches starting with the one holding offset, from one
// segment, ending before upTo (batches at or past upTo.Offset excluded),
// at most maxBytes long unless minOneBatch (then at least the first batch).
// It never decodes records and never takes the append lock; it is safe
// for concurrent use. A Read that continues where the previous one stopped
// (a consumer's next fetch) starts from a remembered position (readHint);
// one near the log end takes the bounds of the newest batches from memory
// (tailRing) and reads no header at all.
// offset < LogStartOffset or > LogEndOffset is ErrOffsetOutOfRange.
func (l *Log) Read(offset int64, maxBytes int32, upTo Position, minOneBatch bool) (ReadResult, error) {
	if err := l.offlineErr(); err != nil {
		return ReadResult{}, err
	}
	gen := l.truncations.Load() // before the segment list: see readHint
	end := *l.endPos.Load()
	lso := l.logStartOffset.Load()
	if offset < lso || offset > end.Offset {
		return ReadResult{}, fmt.Errorf("read %s at offset %d outside [%d, %d]: %w", l.tp, offset, lso, end.Offset, ErrOffsetOutOfRange)
	}
	if upTo.Offset > end.Offset {
		upTo = end
	}
	empty := ReadResult{FirstOffset: offset}
	if offset >= upTo.Offset {
		return empty, nil
	}
	segsp := l.segs.Load()
	segs := *segsp
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
	i = max(i, 0)
	bp := headerBufs.Get().(*[batchPrefix]byte)
	defer headerBufs.Put(bp)
	buf := bp[:]
	for ; i < len(segs); i++ {
		s := segs[i]
		var limit int64
		switch {
		case upTo.SegmentBase == s.base:
			limit = min(upTo.Pos, s.size.Load())
		case upTo.SegmentBase > s.base:
			limit = s.size.Load()
		default:
			return empty, nil
		}
		first, found := l.hintFor(segsp, gen, i, offset)
		if found && first.pos+first.size > limit {
			found = false // past what may be read now: look it up as before
		}
		if !found {
			first, found = l.tail.find(segsp, gen, i, offset)
			found = found && first.end() <= limit
		}
		if !found {
			var err error
			first, found, err = s.findBatch(offset, limit, buf)
			if err != nil {
				return ReadResult{}, fmt.Errorf("read %s at offset %d: %w", l.tp, offset, err)
			}
		}
		if !found {
			if upTo.SegmentBase == s.base {
				return empty, nil
			}
			continue
		}
		if first.baseOffset >= upTo.Offset {
			return empty, nil
		}
		budget := int64(maxBytes)
		if first.size > budget {
			if !minOneBatch {
				l.setHint(segsp, gen, i, first)
				return ReadResult{File: s.log, Pos: first.pos, FirstOffset: first.baseOffset}, nil
			}
			return ReadResult{File: s.log, Pos: first.pos, Size: first.size, FirstOffset: first.baseOffset, Active: i == len(segs)-1}, nil
		}
		stop := min(limit, first.pos+budget)
		pos := first.end()
		if _, ok := l.tail.at(segsp, gen, i, pos); !ok {
			pos = max(pos, s.index.floorPosition(stop)) // skip to the index entry nearest stop
		}
		for pos < stop {
			b, ok := l.tail.at(segsp, gen, i, pos)
			if !ok || b.end() > limit {
				var err error
				if b, err = s.readBounds(pos, limit, buf); err != nil {
					return ReadResult{}, fmt.Errorf("read %s at offset %d: %w", l.tp, offset, err)
				}
			}
			if pos+b.size > stop {
				l.setHint(segsp, gen, i, b)
				break
			}
			pos += b.size
		}
		return ReadResult{File: s.log, Pos: first.pos, Size: pos - first.pos, FirstOffset: first.baseOffset, Active: i == len(segs)-1}, nil
	}
	return empty, nil
}
