package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
)

const (
	offsetEntrySize = 8  // int32 relative offset, int32 position
	timeEntrySize   = 12 // int64 timestamp, int32 relative offset
)

type offsetEntry struct {
	rel int32 // offset - segment base (the last offset of the indexed batch)
	pos int32 // file position of the indexed batch
}

type timeEntry struct {
	ts  int64
	rel int32
}

// offsetIndex is a segment's sparse .index. The entries live in memory (the
// file is written through and read only at open). Safe for concurrent use:
// the log appends under its own lock while readers look up.
type offsetIndex struct {
	file       File
	maxEntries int

	mu      sync.RWMutex
	entries []offsetEntry
}

// lookup returns the position of the last entry whose offset is <= rel, or 0.
func (x *offsetIndex) lookup(rel int32) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].rel > rel })
	if i == 0 {
		return 0
	}
	return int64(x.entries[i-1].pos)
}

// floorPosition returns the largest indexed position <= pos, or 0.
func (x *offsetIndex) floorPosition(pos int64) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) > pos })
	if i == 0 {
		return 0
	}
	return int64(x.entries[i-1].pos)
}

func (x *offsetIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

func (x *offsetIndex) last() (offsetEntry, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.entries) == 0 {
		return offsetEntry{}, false
	}
	return x.entries[len(x.entries)-1], true
}

func (x *offsetIndex) full() bool { return x.len() >= x.maxEntries }

// append adds an entry; rel and pos must grow.
func (x *offsetIndex) append(rel int32, pos int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := len(x.entries)
	if n >= x.maxEntries {
		return fmt.Errorf("append to full index %s", x.file.Name())
	}
	if n > 0 && (x.entries[n-1].rel >= rel || int64(x.entries[n-1].pos) >= pos) {
		return nil // not increasing; skip rather than corrupt the index
	}
	var b [offsetEntrySize]byte
	binary.BigEndian.PutUint32(b[0:], uint32(rel))
	binary.BigEndian.PutUint32(b[4:], uint32(pos))
	if _, err := x.file.WriteAt(b[:], int64(n)*offsetEntrySize); err != nil {
		return fmt.Errorf("write %s: %w", x.file.Name(), err)
	}
	x.entries = append(x.entries, offsetEntry{rel: rel, pos: int32(pos)})
	return nil
}

// truncateToPos drops entries at or after pos (the file keeps stale bytes
// after the live entries; they are overwritten or trimmed later).
func (x *offsetIndex) truncateToPos(pos int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].pos) >= pos })
	x.entries = x.entries[:i]
}

// reset drops every entry and empties the file.
func (x *offsetIndex) reset() error {
	x.mu.Lock()
	x.entries = nil
	x.mu.Unlock()
	if err := x.file.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", x.file.Name(), err)
	}
	return nil
}

// trim cuts the file to its live entries (on roll and close, like Kafka).
func (x *offsetIndex) trim() error {
	size := int64(x.len()) * offsetEntrySize
	if err := x.file.Truncate(size); err != nil {
		return fmt.Errorf("trim %s: %w", x.file.Name(), err)
	}
	return nil
}

// preallocate grows the file to the maximum index size (active segment);
// live entries are rewritten so stale bytes past them become zeros.
func (x *offsetIndex) preallocate(maxBytes int64) error {
	if err := x.trim(); err != nil {
		return err
	}
	if err := x.file.Truncate(maxBytes / offsetEntrySize * offsetEntrySize); err != nil {
		return fmt.Errorf("preallocate %s: %w", x.file.Name(), err)
	}
	return nil
}

// load reads the file's entries, stopping at the first zero entry (the
// preallocated tail). It reports entries that do not grow as corrupt.
func (x *offsetIndex) load() error {
	data, size, err := readIndexFile(x.file, offsetEntrySize)
	if err != nil {
		return err
	}
	if size%offsetEntrySize != 0 {
		return fmt.Errorf("%s: size %d is not a multiple of %d: %w", x.file.Name(), size, offsetEntrySize, ErrCorrupt)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries = x.entries[:0]
	for p := 0; p+offsetEntrySize <= len(data); p += offsetEntrySize {
		e := offsetEntry{
			rel: int32(binary.BigEndian.Uint32(data[p:])),
			pos: int32(binary.BigEndian.Uint32(data[p+4:])),
		}
		if e.pos == 0 && e.rel == 0 {
			break
		}
		if e.rel < 0 || e.pos <= 0 {
			return fmt.Errorf("%s: entry %d (%d, %d) is negative: %w", x.file.Name(), p/offsetEntrySize, e.rel, e.pos, ErrCorrupt)
		}
		if n := len(x.entries); n > 0 && (x.entries[n-1].rel >= e.rel || x.entries[n-1].pos >= e.pos) {
			return fmt.Errorf("%s: entry %d does not grow: %w", x.file.Name(), p/offsetEntrySize, ErrCorrupt)
		}
		if len(x.entries) >= x.maxEntries {
			break
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

// timeIndex is a segment's .timeindex; like offsetIndex it is kept in
// memory and written through. Safe for concurrent use.
type timeIndex struct {
	file       File
	maxEntries int

	mu      sync.RWMutex
	entries []timeEntry
}

func (x *timeIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

func (x *timeIndex) full() bool { return x.len() >= x.maxEntries }

func (x *timeIndex) last() (timeEntry, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.entries) == 0 {
		return timeEntry{}, false
	}
	return x.entries[len(x.entries)-1], true
}

// lookup returns the last entry whose timestamp is <= ts, or false.
func (x *timeIndex) lookup(ts int64) (timeEntry, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].ts > ts })
	if i == 0 {
		return timeEntry{}, false
	}
	return x.entries[i-1], true
}

// maybeAppend adds an entry when ts is larger than the last indexed one.
func (x *timeIndex) maybeAppend(ts int64, rel int32, ignoreFull bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := len(x.entries)
	if ts < 0 || n > 0 && (ts <= x.entries[n-1].ts || rel < x.entries[n-1].rel) {
		return nil
	}
	if n >= x.maxEntries {
		if ignoreFull {
			return nil
		}
		return fmt.Errorf("append to full time index %s", x.file.Name())
	}
	var b [timeEntrySize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], uint32(rel))
	if _, err := x.file.WriteAt(b[:], int64(n)*timeEntrySize); err != nil {
		return fmt.Errorf("write %s: %w", x.file.Name(), err)
	}
	x.entries = append(x.entries, timeEntry{ts: ts, rel: rel})
	return nil
}

// truncateToRel drops entries whose offset is >= rel.
func (x *timeIndex) truncateToRel(rel int32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].rel >= rel })
	x.entries = x.entries[:i]
}

// reset drops every entry and empties the file.
func (x *timeIndex) reset() error {
	x.mu.Lock()
	x.entries = nil
	x.mu.Unlock()
	if err := x.file.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", x.file.Name(), err)
	}
	return nil
}

func (x *timeIndex) trim() error {
	size := int64(x.len()) * timeEntrySize
	if err := x.file.Truncate(size); err != nil {
		return fmt.Errorf("trim %s: %w", x.file.Name(), err)
	}
	return nil
}

func (x *timeIndex) preallocate(maxBytes int64) error {
	if err := x.trim(); err != nil {
		return err
	}
	if err := x.file.Truncate(maxBytes / timeEntrySize * timeEntrySize); err != nil {
		return fmt.Errorf("preallocate %s: %w", x.file.Name(), err)
	}
	return nil
}

func (x *timeIndex) load() error {
	data, size, err := readIndexFile(x.file, timeEntrySize)
	if err != nil {
		return err
	}
	if size%timeEntrySize != 0 {
		return fmt.Errorf("%s: size %d is not a multiple of %d: %w", x.file.Name(), size, timeEntrySize, ErrCorrupt)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries = x.entries[:0]
	for p := 0; p+timeEntrySize <= len(data); p += timeEntrySize {
		e := timeEntry{
			ts:  int64(binary.BigEndian.Uint64(data[p:])),
			rel: int32(binary.BigEndian.Uint32(data[p+8:])),
		}
		if e.ts == 0 && e.rel == 0 {
			break
		}
		if e.rel < 0 {
			return fmt.Errorf("%s: entry %d has negative offset: %w", x.file.Name(), p/timeEntrySize, ErrCorrupt)
		}
		if n := len(x.entries); n > 0 && (x.entries[n-1].ts >= e.ts || x.entries[n-1].rel > e.rel) {
			return fmt.Errorf("%s: entry %d does not grow: %w", x.file.Name(), p/timeEntrySize, ErrCorrupt)
		}
		if len(x.entries) >= x.maxEntries {
			break
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

// readIndexFile reads an index file up to its first all-zero entry (the
// preallocated tail of an active segment is not read), in chunks. size is
// the file's full size, for the sanity check of the caller.
func readIndexFile(f File, entrySize int) (data []byte, size int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	size = fi.Size()
	chunk := make([]byte, 64*1024/entrySize*entrySize)
	zero := make([]byte, entrySize)
	for off := int64(0); off < size; {
		n, err := f.ReadAt(chunk, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		for p := 0; p+entrySize <= n; p += entrySize {
			if bytes.Equal(chunk[p:p+entrySize], zero) {
				return append(data, chunk[:p]...), size, nil
			}
		}
		data = append(data, chunk[:n]...)
		off += int64(n)
		if n == 0 {
			break
		}
	}
	return data, size, nil
}
