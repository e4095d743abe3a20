package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"unsafe"
)

const (
	offsetEntrySize = 8  // int32 relative offset, int32 position
	timeEntrySize   = 12 // int64 timestamp, int32 relative offset
	// indexTailEntries is how many new entries an index keeps in memory
	// before it writes them to its file.
	indexTailEntries = 512
)

type offsetEntry struct {
	rel int32 // offset - segment base (the last offset of the indexed batch)
	pos int32 // file position of the indexed batch
}

type timeEntry struct {
	ts  int64
	rel int32
}

// diskIndex is the part of a segment index shared by .index and .timeindex:
// a sorted list of fixed-size entries, of which the first persisted live in
// the file and the rest (the tail, at most indexTailEntries) in memory.
// The file is opened only to read or write it, never kept open. Lookups
// below the tail load the file's entries into memory, accounted in the
// Manager's index cache, which drops them when it is over its byte budget;
// the next lookup loads them again. So a rolled segment costs no memory
// until it is read, and an active one about indexTailEntries entries.
//
// Safe for concurrent use: the log appends under its own lock while
// readers look up.
type diskIndex[E comparable] struct {
	fs         FS
	cache      *clockCache
	entry      cacheEntry
	entrySize  int
	maxEntries int
	enc        func([]byte, E)
	dec        func([]byte) E
	follows    func(prev, e E) bool // e may come after prev in a sane file
	first      func(e E) bool       // e may be the first entry
	// repair, when set, rebuilds the file from the log after a lookup
	// found it insane, and reports whether it did (see segment.repair).
	repair func() bool

	mu        sync.RWMutex
	path      string
	persisted int // entries in the file
	// loaded is the persisted entries while cached, else nil. It is only
	// ever appended to, past the length a reader holds, so a reader
	// searches its copy of the slice without the lock.
	loaded   []E
	tail     []E // entries after the persisted ones
	last     E
	haveLast bool
	dirty    bool // the file was written since the last sync
}

func (x *diskIndex[E]) init(fs FS, cache *clockCache, path string, maxEntries int) {
	x.fs, x.cache, x.path, x.maxEntries = fs, cache, path, maxEntries
	x.entry = cacheEntry{owner: x, slot: -1}
}

// setFileSize records how many entries the file holds (at open, from its
// size, without reading it).
func (x *diskIndex[E]) setFileSize(size int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if size%int64(x.entrySize) != 0 {
		return fmt.Errorf("%s: size %d is not a multiple of %d: %w", x.path, size, x.entrySize, ErrCorrupt)
	}
	x.persisted = int(min(size/int64(x.entrySize), int64(x.maxEntries)))
	x.loaded, x.tail, x.haveLast = nil, nil, false
	return nil
}

func (x *diskIndex[E]) name() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.path
}

func (x *diskIndex[E]) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.persisted + len(x.tail)
}

func (x *diskIndex[E]) full() bool { return x.len() >= x.maxEntries }

// lastEntry returns the newest entry, reading it from the file if needed.
func (x *diskIndex[E]) lastEntry() (E, bool, error) {
	x.mu.RLock()
	e, have, n := x.last, x.haveLast, x.persisted+len(x.tail)
	x.mu.RUnlock()
	if have || n == 0 {
		return e, have, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.readLastLocked(); err != nil {
		return e, false, err
	}
	return x.last, x.haveLast, nil
}

func (x *diskIndex[E]) readLastLocked() error {
	if x.haveLast || x.persisted+len(x.tail) == 0 {
		return nil
	}
	if len(x.tail) > 0 {
		x.last, x.haveLast = x.tail[len(x.tail)-1], true
		return nil
	}
	b, err := x.readFileLocked(x.persisted-1, 1)
	if err != nil {
		return err
	}
	x.last, x.haveLast = x.dec(b), true
	return nil
}

// readFileLocked reads n entries starting at entry i.
func (x *diskIndex[E]) readFileLocked(i, n int) ([]byte, error) {
	f, err := x.fs.OpenFile(x.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", x.path, err)
	}
	defer f.Close()
	b := make([]byte, n*x.entrySize)
	m, err := f.ReadAt(b, int64(i*x.entrySize))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", x.path, err)
	}
	if m < len(b) {
		return nil, fmt.Errorf("%s: %d bytes short: %w", x.path, len(b)-m, ErrCorrupt)
	}
	return b, nil
}

// floor returns the last entry for which gt is false (gt must be false
// then true along the entries), or false when there is none.
func (x *diskIndex[E]) floor(gt func(E) bool) (E, bool) {
	var zero E
	x.mu.RLock()
	if n := len(x.tail); n > 0 && !gt(x.tail[0]) {
		i := sort.Search(n, func(i int) bool { return gt(x.tail[i]) })
		e := x.tail[i-1]
		x.mu.RUnlock()
		return e, true
	}
	x.mu.RUnlock()
	ents := x.persistedEntries()
	i := sort.Search(len(ents), func(i int) bool { return gt(ents[i]) })
	if i == 0 {
		return zero, false
	}
	return ents[i-1], true
}

// persistedEntries returns the file's entries, loading them into the
// cache when absent. An unreadable or insane file reads as its sane
// prefix (lookups then scan from an earlier position, which is correct,
// only slower).
func (x *diskIndex[E]) persistedEntries() []E {
	x.mu.RLock()
	ents, n := x.loaded, x.persisted
	x.mu.RUnlock()
	if n == 0 {
		return nil
	}
	if ents != nil {
		x.entry.ref.Store(true)
		return ents
	}
	x.mu.Lock()
	if x.loaded != nil || x.persisted == 0 {
		ents = x.loaded
		x.mu.Unlock()
		return ents
	}
	ents, insane := x.readSaneLocked()
	if insane && x.repair != nil {
		x.mu.Unlock()
		if !x.repair() {
			x.mu.Lock()
			ents, _ = x.readSaneLocked()
		} else {
			x.mu.Lock()
			ents = x.loaded
			if ents == nil {
				ents, _ = x.readSaneLocked()
			}
		}
	}
	x.loaded = ents
	x.mu.Unlock()
	var e E
	x.cache.add(&x.entry, int64(cap(ents))*int64(unsafe.Sizeof(e))+128)
	return ents
}

// readSaneLocked reads the persisted entries up to the first zero one
// (the preallocated tail of an index written by an older version) or the
// first insane one (then insane is true).
func (x *diskIndex[E]) readSaneLocked() (ents []E, insane bool) {
	ents = make([]E, 0, x.persisted)
	b, err := x.readFileLocked(0, x.persisted)
	if err != nil {
		return ents, true
	}
	var zero E
	for p := 0; p+x.entrySize <= len(b); p += x.entrySize {
		e := x.dec(b[p:])
		if e == zero {
			break
		}
		if len(ents) == 0 && !x.first(e) || len(ents) > 0 && !x.follows(ents[len(ents)-1], e) {
			return ents, true
		}
		ents = append(ents, e)
	}
	return ents, false
}

// replace makes ents the whole index, written to the file.
func (x *diskIndex[E]) replace(ents []E) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.tail, x.loaded, x.persisted, x.haveLast = nil, nil, 0, false
	x.cache.remove(&x.entry)
	f, err := x.fs.OpenFile(x.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("rewrite %s: %w", x.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", x.path, err)
	}
	x.tail = ents
	if len(ents) > 0 {
		x.last, x.haveLast = ents[len(ents)-1], true
	}
	return x.writeLocked(true)
}

// check reads the whole file and reports an insane one as ErrCorrupt (for
// a segment whose log is trusted at open after an unclean shutdown).
func (x *diskIndex[E]) check() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.persisted == 0 {
		return nil
	}
	if ents, insane := x.readSaneLocked(); insane {
		return fmt.Errorf("%s: entry %d of %d does not grow: %w", x.path, len(ents), x.persisted, ErrCorrupt)
	}
	return nil
}

func (x *diskIndex[E]) tryEvict() bool {
	if !x.mu.TryLock() {
		return false
	}
	x.loaded = nil
	x.mu.Unlock()
	return true
}

// add appends e when it follows the last entry (else skips it, rather
// than corrupt the index) and writes the tail out when it is long.
func (x *diskIndex[E]) add(e E) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.readLastLocked(); err != nil {
		return err
	}
	if x.haveLast && !x.follows(x.last, e) {
		return nil
	}
	if x.persisted+len(x.tail) >= x.maxEntries {
		return fmt.Errorf("append to full index %s", x.path)
	}
	x.tail = append(x.tail, e)
	x.last, x.haveLast = e, true
	if len(x.tail) >= indexTailEntries {
		return x.writeLocked(false)
	}
	return nil
}

// writeLocked writes the tail to the file (trim: and cuts the file to the
// live entries, as on roll and close).
func (x *diskIndex[E]) writeLocked(trim bool) error {
	if len(x.tail) == 0 && !trim {
		return nil
	}
	f, err := x.fs.OpenFile(x.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open index %s: %w", x.path, err)
	}
	b := make([]byte, len(x.tail)*x.entrySize)
	for i, e := range x.tail {
		x.enc(b[i*x.entrySize:], e)
	}
	werr := error(nil)
	if len(b) > 0 {
		if _, err := f.WriteAt(b, int64(x.persisted*x.entrySize)); err != nil {
			werr = fmt.Errorf("write %s: %w", x.path, err)
		}
	}
	if werr == nil && trim {
		if err := f.Truncate(int64((x.persisted + len(x.tail)) * x.entrySize)); err != nil {
			werr = fmt.Errorf("trim %s: %w", x.path, err)
		}
	}
	if err := f.Close(); err != nil && werr == nil {
		werr = fmt.Errorf("close %s: %w", x.path, err)
	}
	if werr != nil {
		return werr
	}
	if len(x.tail) > 0 && x.loaded != nil {
		// Readers hold x.loaded only up to its old length, so appending
		// in place never changes what they see.
		x.loaded = append(x.loaded, x.tail...)
		var e E
		x.cache.setCost(&x.entry, int64(cap(x.loaded))*int64(unsafe.Sizeof(e))+128)
	}
	x.persisted += len(x.tail)
	if trim || cap(x.tail) > 2*indexTailEntries {
		x.tail = nil // a sealed index keeps nothing in memory
	} else {
		x.tail = x.tail[:0]
	}
	x.dirty = true
	return nil
}

// seal writes every entry to the file and trims it (roll, close). The
// file holds exactly the persisted entries already when none are in
// memory.
func (x *diskIndex[E]) seal() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.tail) == 0 {
		x.tail = nil
		return nil
	}
	return x.writeLocked(true)
}

// reset drops every entry and empties the file (creating it if needed).
func (x *diskIndex[E]) reset() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.tail, x.loaded, x.persisted, x.haveLast = nil, nil, 0, false
	x.cache.remove(&x.entry)
	f, err := x.fs.OpenFile(x.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("truncate %s: %w", x.path, err)
	}
	x.dirty = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", x.path, err)
	}
	return nil
}

// sync fsyncs the file when it was written since the last sync.
func (x *diskIndex[E]) sync() error {
	x.mu.Lock()
	dirty, path := x.dirty, x.path
	x.dirty = false
	x.mu.Unlock()
	if !dirty {
		return nil
	}
	err := func() error {
		f, err := x.fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		serr := f.Sync()
		return errors.Join(serr, f.Close())
	}()
	if err != nil {
		x.mu.Lock()
		x.dirty = true
		x.mu.Unlock()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// rename renames the file (for deletion).
func (x *diskIndex[E]) rename(newPath string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.fs.Rename(x.path, newPath); err != nil {
		return err
	}
	x.path = newPath
	return nil
}

// drop forgets the loaded entries (the segment closed).
func (x *diskIndex[E]) drop() {
	x.mu.Lock()
	x.loaded = nil
	x.mu.Unlock()
	x.cache.remove(&x.entry)
}

// offsetIndex is a segment's sparse .index: relative offset -> position.
type offsetIndex struct{ diskIndex[offsetEntry] }

func newOffsetIndex(fs FS, cache *clockCache, path string, maxEntries int) *offsetIndex {
	x := &offsetIndex{}
	x.init(fs, cache, path, maxEntries)
	x.entrySize = offsetEntrySize
	x.enc = func(b []byte, e offsetEntry) {
		binary.BigEndian.PutUint32(b[0:], uint32(e.rel))
		binary.BigEndian.PutUint32(b[4:], uint32(e.pos))
	}
	x.dec = func(b []byte) offsetEntry {
		return offsetEntry{rel: int32(binary.BigEndian.Uint32(b[0:])), pos: int32(binary.BigEndian.Uint32(b[4:]))}
	}
	x.first = func(e offsetEntry) bool { return e.rel >= 0 && e.pos > 0 }
	x.follows = func(p, e offsetEntry) bool { return e.rel > p.rel && e.pos > p.pos }
	return x
}

// lookup returns the position of the last entry whose offset is <= rel, or 0.
func (x *offsetIndex) lookup(rel int32) int64 {
	e, ok := x.floor(func(e offsetEntry) bool { return e.rel > rel })
	if !ok {
		return 0
	}
	return int64(e.pos)
}

// floorPosition returns the largest indexed position <= pos, or 0.
func (x *offsetIndex) floorPosition(pos int64) int64 {
	e, ok := x.floor(func(e offsetEntry) bool { return int64(e.pos) > pos })
	if !ok {
		return 0
	}
	return int64(e.pos)
}

func (x *offsetIndex) last() (offsetEntry, bool) {
	e, ok, _ := x.lastEntry()
	return e, ok
}

// append adds an entry; rel and pos must grow (else it is skipped).
func (x *offsetIndex) append(rel int32, pos int64) error {
	return x.add(offsetEntry{rel: rel, pos: int32(pos)})
}

// timeIndex is a segment's .timeindex: timestamp -> relative offset.
type timeIndex struct{ diskIndex[timeEntry] }

func newTimeIndex(fs FS, cache *clockCache, path string, maxEntries int) *timeIndex {
	x := &timeIndex{}
	x.init(fs, cache, path, maxEntries)
	x.entrySize = timeEntrySize
	x.enc = func(b []byte, e timeEntry) {
		binary.BigEndian.PutUint64(b[0:], uint64(e.ts))
		binary.BigEndian.PutUint32(b[8:], uint32(e.rel))
	}
	x.dec = func(b []byte) timeEntry {
		return timeEntry{ts: int64(binary.BigEndian.Uint64(b[0:])), rel: int32(binary.BigEndian.Uint32(b[8:]))}
	}
	x.first = func(e timeEntry) bool { return e.rel >= 0 }
	x.follows = func(p, e timeEntry) bool { return e.ts > p.ts && e.rel >= p.rel }
	return x
}

func (x *timeIndex) last() (timeEntry, bool) {
	e, ok, _ := x.lastEntry()
	return e, ok
}

// lookup returns the last entry whose timestamp is <= ts, or false.
func (x *timeIndex) lookup(ts int64) (timeEntry, bool) {
	return x.floor(func(e timeEntry) bool { return e.ts > ts })
}

// maybeAppend adds an entry when ts is larger than the last indexed one.
func (x *timeIndex) maybeAppend(ts int64, rel int32, ignoreFull bool) error {
	if ts < 0 {
		return nil
	}
	if ignoreFull && x.full() {
		return nil
	}
	return x.add(timeEntry{ts: ts, rel: rel})
}
