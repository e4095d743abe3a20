package storage

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Default bounds of a Manager's segment caches (ManagerConfig fields).
const (
	// DefaultMaxOpenSegmentFiles bounds the .log handles of inactive
	// segments a Manager keeps open.
	DefaultMaxOpenSegmentFiles = 1000
	// DefaultIndexCacheBytes bounds the index entries of inactive segments
	// (and the written part of active ones) a Manager keeps in memory.
	DefaultIndexCacheBytes = 32 << 20
)

// segmentCaches are what a Manager shares between its logs so that stored
// data costs neither file descriptors nor heap: the open .log handles of
// inactive segments (files) and the loaded, written part of segment
// indexes (indexes). Active segments keep their .log open outside the
// bound. Safe for concurrent use.
type segmentCaches struct {
	files   *clockCache
	indexes *clockCache
}

func newSegmentCaches(maxFiles int, indexBytes int64) *segmentCaches {
	if maxFiles <= 0 {
		maxFiles = DefaultMaxOpenSegmentFiles
	}
	if indexBytes <= 0 {
		indexBytes = DefaultIndexCacheBytes
	}
	return &segmentCaches{files: &clockCache{budget: int64(maxFiles)}, indexes: &clockCache{budget: indexBytes}}
}

// fdLimitedMaxFiles lowers want so that the open segment handles use at
// most half of RLIMIT_NOFILE, leaving the rest to sockets and active
// segments (never below 16).
func fdLimitedMaxFiles(want int) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 || rl.Cur > 1<<30 {
		return want
	}
	return min(want, max(int(rl.Cur/2), 16))
}

// evictable is an entry of a clockCache. tryEvict drops what the entry
// holds and reports true, or reports false when it is in use; it is called
// with the cache's lock held, so it must not wait for a lock its owner may
// hold while calling into the cache (use TryLock).
type evictable interface {
	tryEvict() bool
}

// cacheEntry is an evictable's place in a clockCache.
type cacheEntry struct {
	owner evictable
	ref   atomic.Bool // used since the hand last passed
	cost  int64       // guarded by the cache's mu
	slot  int         // index in clockCache.ring, -1 when absent; guarded by mu
}

// clockCache bounds the total cost of its entries with the CLOCK
// approximation of LRU: a hit only sets the entry's ref bit (no lock), an
// insertion over budget sweeps the ring, clearing ref bits and evicting
// the first unreferenced entry that agrees. Entries in use refuse and stay,
// so the budget can be exceeded while they are. Safe for concurrent use.
type clockCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	ring   []*cacheEntry
	hand   int
	evicts atomic.Int64
	over   atomic.Bool // used > budget after the last sweep (entries were in use)
}

// add inserts e (not yet present) with cost and evicts others until the
// cache fits its budget or nothing more can go.
func (c *clockCache) add(e *cacheEntry, cost int64) {
	e.ref.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.slot >= 0 {
		return
	}
	e.cost = cost
	e.slot = len(c.ring)
	c.ring = append(c.ring, e)
	c.used += cost
	c.sweepLocked(e)
}

// sweepLocked evicts entries other than keep until the cache fits.
func (c *clockCache) sweepLocked(keep *cacheEntry) {
	for sweeps := 2 * len(c.ring); c.used > c.budget && sweeps > 0 && len(c.ring) > 0; sweeps-- {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		v := c.ring[c.hand]
		if v == keep || v.ref.Swap(false) || !v.owner.tryEvict() {
			c.hand++
			continue
		}
		c.removeLocked(v)
		c.evicts.Add(1)
	}
	c.over.Store(c.used > c.budget)
}

// shrink sweeps when an earlier sweep left the cache over its budget
// (called when an entry stops being in use).
func (c *clockCache) shrink() {
	if !c.over.Load() {
		return
	}
	c.mu.Lock()
	c.sweepLocked(nil)
	c.mu.Unlock()
}

// setCost changes the cost of e (if present) and sweeps others out.
func (c *clockCache) setCost(e *cacheEntry, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.slot < 0 {
		return
	}
	c.used += cost - e.cost
	e.cost = cost
	c.sweepLocked(e)
}

// remove takes e out of the cache (its owner dropped what it held).
func (c *clockCache) remove(e *cacheEntry) {
	c.mu.Lock()
	if e.slot >= 0 && e.slot < len(c.ring) && c.ring[e.slot] == e {
		c.removeLocked(e)
	}
	c.mu.Unlock()
}

func (c *clockCache) removeLocked(e *cacheEntry) {
	last := len(c.ring) - 1
	c.ring[e.slot] = c.ring[last]
	c.ring[e.slot].slot = e.slot
	c.ring[last] = nil
	c.ring = c.ring[:last]
	c.used -= e.cost
	e.slot = -1
}

// stats returns the number of entries and their total cost.
func (c *clockCache) stats() (entries int, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring), c.used
}

// segFile is a segment's .log file, opened on demand. The active segment's
// is pinned: opened at once and never evicted. An inactive segment's is
// opened at first use and then held in the Manager's file cache, which
// closes it when the bound is reached and nobody is using it; the next use
// opens it again. Every operation holds a reference for its duration, so a
// handle is never closed under a ReadAt, a WriteAt or a sendfile: a
// segFile handed out by Log.Read stays valid until the segment is deleted
// (Close), the same contract as an always-open file.
//
// segFile implements File and syscall.Conn (its RawConn takes a reference
// for each Control, so the network layer's sendfile is safe against
// eviction). Safe for concurrent use.
type segFile struct {
	fs    FS
	cache *clockCache
	entry cacheEntry

	app rawAppender // appends (Append)

	mu     sync.Mutex
	path   string
	f      File // nil while closed
	refs   int
	pinned bool
	closed bool // Close was called: no more opens
}

var errSegmentClosed = fmt.Errorf("segment file: %w", os.ErrClosed)

func newSegFile(fs FS, cache *clockCache, path string, f File) *segFile {
	h := &segFile{fs: fs, cache: cache, path: path, f: f}
	h.entry = cacheEntry{owner: h, slot: -1}
	return h
}

// acquire returns the open file with a reference taken; release it.
func (h *segFile) acquire() (File, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errSegmentClosed
	}
	opened := false
	if h.f == nil {
		f, err := h.fs.OpenFile(h.path, os.O_RDWR, 0)
		if err != nil {
			h.mu.Unlock()
			return nil, fmt.Errorf("open segment %s: %w", h.path, err)
		}
		h.f, opened = f, true
	}
	h.refs++
	f, pinned := h.f, h.pinned
	h.mu.Unlock()
	if opened && !pinned {
		h.cache.add(&h.entry, 1)
	} else {
		h.entry.ref.Store(true)
	}
	return f, nil
}

func (h *segFile) release() {
	h.mu.Lock()
	h.refs--
	idle := h.refs == 0
	var f File
	if idle && h.closed && h.f != nil {
		f, h.f = h.f, nil
	}
	h.mu.Unlock()
	if f != nil {
		_ = f.Close()
	} else if idle {
		h.cache.shrink()
	}
}

func (h *segFile) tryEvict() bool {
	if !h.mu.TryLock() {
		return false
	}
	if h.refs > 0 || h.pinned || h.f == nil {
		h.mu.Unlock()
		return h.f == nil && !h.pinned
	}
	f := h.f
	h.f = nil
	h.mu.Unlock()
	_ = f.Close()
	return true
}

// pin keeps the file open outside the cache (the active segment).
func (h *segFile) pin() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errSegmentClosed
	}
	if h.f == nil {
		f, err := h.fs.OpenFile(h.path, os.O_RDWR, 0)
		if err != nil {
			h.mu.Unlock()
			return fmt.Errorf("open segment %s: %w", h.path, err)
		}
		h.f = f
	}
	h.pinned = true
	h.mu.Unlock()
	h.cache.remove(&h.entry)
	return nil
}

// unpin hands an open file to the cache (the segment was rolled).
func (h *segFile) unpin() {
	h.mu.Lock()
	was := h.pinned
	h.pinned = false
	open := h.f != nil && !h.closed
	h.mu.Unlock()
	if was && open {
		h.cache.add(&h.entry, 1)
	}
}

// rename renames the file (for deletion) and reopens under the new name.
func (h *segFile) rename(newPath string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.fs.Rename(h.path, newPath); err != nil {
		return err
	}
	h.path = newPath
	return nil
}

func (h *segFile) Name() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.path
}

func (h *segFile) ReadAt(b []byte, off int64) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release()
	return f.ReadAt(b, off)
}

func (h *segFile) Write(b []byte) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release()
	return f.Write(b)
}

func (h *segFile) WriteAt(b []byte, off int64) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release()
	h.app.forget()
	return f.WriteAt(b, off)
}

// Append writes b at off, the end of the file, as the log appends a batch:
// raw when the previous append ended there moments ago (rawappend.go).
// Appends to a file must not run concurrently.
func (h *segFile) Append(b []byte, off int64) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release()
	return h.app.append(f, b, off)
}

// Sync fsyncs the file; a file not open has nothing unsynced from this
// process that a new descriptor would not also sync, so it is opened.
func (h *segFile) Sync() error {
	f, err := h.acquire()
	if err != nil {
		return err
	}
	defer h.release()
	return f.Sync()
}

func (h *segFile) Truncate(size int64) error {
	f, err := h.acquire()
	if err != nil {
		return err
	}
	defer h.release()
	h.app.forget()
	return f.Truncate(size)
}

// Stat stats the file by name when it is not open (no descriptor needed).
func (h *segFile) Stat() (os.FileInfo, error) {
	h.mu.Lock()
	f, path := h.f, h.path
	if f != nil {
		h.refs++
	}
	h.mu.Unlock()
	if f == nil {
		return h.fs.Stat(path)
	}
	defer h.release()
	return f.Stat()
}

// Close closes the file for good (the segment left the log or the log
// closed); an operation in flight keeps it open until it ends.
func (h *segFile) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	var f File
	if h.refs == 0 {
		f, h.f = h.f, nil
	}
	h.mu.Unlock()
	h.cache.remove(&h.entry)
	if f != nil {
		return f.Close()
	}
	return nil
}

func (h *segFile) isPinned() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pinned
}

// isOpen reports whether a descriptor is held (for tests).
func (h *segFile) isOpen() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.f != nil
}

// SyscallConn lets the network layer sendfile from the segment when the
// underlying file is an *os.File.
func (h *segFile) SyscallConn() (syscall.RawConn, error) {
	f, err := h.acquire()
	if err != nil {
		return nil, err
	}
	defer h.release()
	if _, ok := f.(syscall.Conn); !ok {
		return nil, errors.New("segment file has no descriptor")
	}
	return segRawConn{h}, nil
}

// segRawConn runs each call on a referenced descriptor of its segFile.
type segRawConn struct{ h *segFile }

func (c segRawConn) do(fn func(syscall.RawConn) error) error {
	f, err := c.h.acquire()
	if err != nil {
		return err
	}
	defer c.h.release()
	sc, ok := f.(syscall.Conn)
	if !ok {
		return errors.New("segment file has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return fn(rc)
}

func (c segRawConn) Control(fn func(fd uintptr)) error {
	return c.do(func(rc syscall.RawConn) error { return rc.Control(fn) })
}

func (c segRawConn) Read(fn func(fd uintptr) bool) error {
	return c.do(func(rc syscall.RawConn) error { return rc.Read(fn) })
}

func (c segRawConn) Write(fn func(fd uintptr) bool) error {
	return c.do(func(rc syscall.RawConn) error { return rc.Write(fn) })
}
