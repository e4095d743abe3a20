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

// Index pages (variables so that tests can shrink them).
var (
	// indexPageEntries is how many file entries a lookup reads at once: a
	// page, 4 KiB of .index.
	indexPageEntries = 512
	// indexWholeFilePages: a file of at most this many pages is read
	// whole by its first lookup, in one read rather than one per page.
	indexWholeFilePages = 4
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
// The file is opened only to read or write it, never kept open. A lookup
// below the tail binary-searches the file a page (indexPageEntries) at a
// time, reading only the pages on its path (about log2 of the file's pages,
// e.g. 10 of a 1 GiB segment's 2 MiB index) into memory, and keeps them,
// accounted in the Manager's index cache, which drops an index's pages when
// it is over its byte budget; the next lookup reads them again. So a rolled
// segment costs no memory until it is read and then only the pages its
// lookups touched, and an active one about indexTailEntries entries.
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
	// sane is how many of the persisted entries lookups use: all of them,
	// unless a page read found zeros (an older version's preallocated
	// file) or entries that do not grow and the file could not be rebuilt.
	sane int
	// pages holds the persisted entries read so far, by page (page i holds
	// entries [i*indexPageEntries, ...)); nil when none are, and a nil
	// page is not read. A page is only ever appended to, past the length a
	// reader holds, so a reader searches its copy without the lock.
	pages     [][]E
	pageBytes int64 // what pages cost in the cache
	tail      []E   // entries after the persisted ones
	last      E
	haveLast  bool
	dirty     bool // the file was written since the last sync
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
	x.sane = x.persisted
	x.pages, x.pageBytes, x.tail, x.haveLast = nil, 0, nil, false
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
	// A page that turns out insane is rebuilt or cut off, and the search
	// starts again: at most twice, then it answers none (a scan from the
	// segment's start, correct but slow).
	for range 2 {
		if e, ok, done := x.floorPersisted(gt); done {
			return e, ok
		}
	}
	return zero, false
}

// floorPersisted is floor over the file's entries: a binary search for
// the last page whose first entry is not gt, then one within it. done is
// false when a page was insane and the search must start again.
func (x *diskIndex[E]) floorPersisted(gt func(E) bool) (e E, ok, done bool) {
	x.mu.RLock()
	n := x.sane
	x.mu.RUnlock()
	if n == 0 {
		return e, false, true
	}
	insane := false
	next := sort.Search((n+indexPageEntries-1)/indexPageEntries, func(i int) bool {
		pg, sane := x.page(i)
		insane = insane || !sane
		return insane || len(pg) == 0 || gt(pg[0])
	})
	if insane {
		return e, false, false
	}
	if next == 0 {
		return e, false, true
	}
	pg, sane := x.page(next - 1)
	if !sane || len(pg) == 0 || gt(pg[0]) {
		return e, false, false // cut or rebuilt under the search
	}
	j := sort.Search(len(pg), func(j int) bool { return gt(pg[j]) })
	return pg[j-1], true, true
}

// page returns page i of the persisted entries, reading it when absent
// (an empty page is past the sane entries), and false when the file was
// insane: then it was rebuilt or cut to its sane prefix.
func (x *diskIndex[E]) page(i int) ([]E, bool) {
	x.mu.RLock()
	var pg []E
	have := i < len(x.pages) && x.pages[i] != nil
	if have {
		pg = x.pages[i]
	}
	n := x.sane
	x.mu.RUnlock()
	if i*indexPageEntries >= n {
		return nil, true
	}
	if have {
		x.entry.ref.Store(true)
		return pg, true
	}
	from, to := i*indexPageEntries, (i+1)*indexPageEntries
	if n <= indexWholeFilePages*indexPageEntries {
		from, to = 0, n // a small file: one read
	}
	if !x.loadPages(from, to) {
		return nil, false
	}
	x.mu.RLock()
	if i < len(x.pages) {
		pg = x.pages[i]
	}
	x.mu.RUnlock()
	return pg, true
}

// loadPages reads the pages holding entries [from, to) (from on a page
// boundary) that are not in memory, and checks that each page's entries
// grow and follow those of the pages next to it that are in memory. It
// returns false when they do not: the file is then rebuilt from the log,
// or else lookups use only its sane prefix.
func (x *diskIndex[E]) loadPages(from, to int) bool {
	x.mu.Lock()
	to = min(to, x.sane)
	for from < to && from/indexPageEntries < len(x.pages) && x.pages[from/indexPageEntries] != nil {
		from += indexPageEntries // a page another lookup read meanwhile
	}
	if from >= to {
		x.mu.Unlock()
		return true
	}
	b, err := x.readFileLocked(from, to-from)
	if err != nil {
		x.mu.Unlock()
		return x.insane()
	}
	if x.pages == nil {
		x.pages = make([][]E, (x.persisted+indexPageEntries-1)/indexPageEntries)
	}
	// A page of zeros cuts x.sane, and with it the pages to read.
	for start := from; start < min(to, x.sane); start += indexPageEntries {
		i := start / indexPageEntries
		if x.pages[i] != nil {
			continue
		}
		end := min(start+indexPageEntries, to)
		pg := make([]E, 0, end-start)
		var zero E
		for k := start; k < end; k++ {
			e := x.dec(b[(k-from)*x.entrySize:])
			if e == zero {
				// An older version's preallocated file: it ends here.
				x.cutLocked(k)
				break
			}
			if prev, ok := x.entryBeforeLocked(pg, k); ok && !x.follows(prev, e) || !ok && k == 0 && !x.first(e) {
				x.mu.Unlock()
				return x.insane()
			}
			pg = append(pg, e)
		}
		if len(pg) > 0 && i+1 < len(x.pages) && len(x.pages[i+1]) > 0 && !x.follows(pg[len(pg)-1], x.pages[i+1][0]) {
			x.mu.Unlock()
			return x.insane()
		}
		x.pages[i] = pg
		var e E
		x.pageBytes += int64(cap(pg)) * int64(unsafe.Sizeof(e))
	}
	cost := x.pageBytes + int64(len(x.pages))*int64(unsafe.Sizeof([]E(nil))) + 128
	x.mu.Unlock()
	x.cache.add(&x.entry, cost)
	x.cache.setCost(&x.entry, cost)
	return true
}

// entryBeforeLocked returns the entry before entry k, which is in pg (the
// page being read, its entries so far) or, at a page start, the last of
// the previous page when that is in memory.
func (x *diskIndex[E]) entryBeforeLocked(pg []E, k int) (E, bool) {
	if len(pg) > 0 {
		return pg[len(pg)-1], true
	}
	var zero E
	if i := k / indexPageEntries; k > 0 && i > 0 && len(x.pages[i-1]) == indexPageEntries {
		return x.pages[i-1][indexPageEntries-1], true
	}
	return zero, false
}

// cutLocked makes lookups use only the first n persisted entries, and
// drops the pages past them.
func (x *diskIndex[E]) cutLocked(n int) {
	x.sane = min(x.sane, n)
	for i := range x.pages {
		if i*indexPageEntries >= x.sane {
			x.pages[i] = nil
		} else if end := x.sane - i*indexPageEntries; len(x.pages[i]) > end {
			x.pages[i] = x.pages[i][:end:end]
		}
	}
}

// insane handles a file whose entries do not grow: it is rebuilt from the
// log when the segment allows (see segment.repair), else lookups use only
// its sane prefix. It always returns false (for loadPages).
func (x *diskIndex[E]) insane() bool {
	if x.repair != nil && x.repair() {
		return false
	}
	x.mu.Lock()
	ents, _ := x.readSaneLocked()
	x.cutLocked(len(ents))
	x.mu.Unlock()
	return false
}

// persistedEntries returns the file's sane entries, reading every page
// (for tests and checks, not lookups).
func (x *diskIndex[E]) persistedEntries() []E {
	x.mu.RLock()
	n := x.sane
	x.mu.RUnlock()
	var ents []E
	for i := 0; i*indexPageEntries < n; i++ {
		pg, _ := x.page(i)
		ents = append(ents, pg...)
	}
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
	x.tail, x.persisted, x.sane, x.haveLast = nil, 0, 0, false
	x.dropPagesLocked()
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
	x.pages, x.pageBytes = nil, 0
	x.mu.Unlock()
	return true
}

// dropPagesLocked forgets the pages read and leaves the cache.
func (x *diskIndex[E]) dropPagesLocked() {
	x.pages, x.pageBytes = nil, 0
	x.cache.remove(&x.entry)
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
	if x.sane == x.persisted {
		x.sane += len(x.tail)
	}
	if n := len(x.pages); n > 0 && x.pages[n-1] != nil && len(x.pages[n-1]) < indexPageEntries &&
		(n-1)*indexPageEntries+len(x.pages[n-1]) == x.persisted {
		// The last page read is the file's partial last page: it takes the
		// new entries that fall in it. Readers hold it only up to its old
		// length, so appending in place never changes what they see.
		pg := x.pages[n-1]
		pg = append(pg, x.tail[:min(len(x.tail), indexPageEntries-len(pg))]...)
		var e E
		x.pageBytes += int64(cap(pg)-cap(x.pages[n-1])) * int64(unsafe.Sizeof(e))
		x.pages[n-1] = pg
	}
	x.persisted += len(x.tail)
	if more := (x.persisted+indexPageEntries-1)/indexPageEntries - len(x.pages); x.pages != nil && more > 0 {
		x.pages = append(x.pages, make([][]E, more)...) // unread pages
	}
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
	x.tail, x.persisted, x.sane, x.haveLast = nil, 0, 0, false
	x.dropPagesLocked()
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

// drop forgets the pages read (the segment closed).
func (x *diskIndex[E]) drop() {
	x.mu.Lock()
	x.dropPagesLocked()
	x.mu.Unlock()
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
