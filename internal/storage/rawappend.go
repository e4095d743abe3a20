package storage

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Appends without the runtime's system call bookkeeping.
//
// An ordinary pwrite enters the runtime's system call state, and the
// first one after an idle spell wakes the runtime's sysmon thread, which
// then polls every 20 µs until the process is idle again. On a broker
// that appends between idle spells all the time, and on a virtual machine
// where a thread's sleep and wake-up cost microseconds, that polling took
// 13 % of the CPU of the 100 B produce path (internal/wire/rawio.go does
// the same for sockets). A raw call keeps its P while it runs, so an
// append is written raw only when it cannot wait long:
//
//   - it continues the previous append to the same file, made less than
//     a second ago: the page it starts in was dirtied then and is still in
//     memory, so nothing is read from the disk;
//   - writeback will not throttle it: the system's dirty and writeback
//     pages are below the background threshold, half of where
//     balance_dirty_pages starts to sleep (re-read from /proc/vmstat at
//     most every 100 ms), and no cgroup memory limit, which would set a
//     lower threshold and reclaim within the group, applies;
//   - the file is on ext4 or xfs on a disk that does not need stable pages
//     during writeback (or on tmpfs): a write to a page being written back
//     does not wait for the disk;
//   - another P runs the rest of the process meanwhile (GOMAXPROCS ≥ 2).
//
// Anything else is an ordinary write, which lets the runtime hand the P
// to another thread if it blocks.

// rawAppends counts the appends written raw (for tests).
var rawAppends atomic.Int64

// rawAppendRecent is how old the previous append may be for the next one
// to be raw.
const rawAppendRecent = time.Second

// rawGateRecheck is how often the system-wide conditions are re-read.
const rawGateRecheck = 100 * time.Millisecond

// rawGate holds the system-wide conditions of raw appends.
type rawGateState struct {
	checked atomic.Int64 // unix nanoseconds of the last check, 0: never
	open    atomic.Bool
	mu      sync.Mutex // one check at a time
	limited int8       // a cgroup memory limit applies: 0 unknown, 1 yes, -1 no
	vmstat  string     // /proc/vmstat, a variable for tests
}

var rawGate = rawGateState{vmstat: "/proc/vmstat"}

// allows reports whether the system-wide conditions hold at now.
func (g *rawGateState) allows(now int64) bool {
	if now-g.checked.Load() >= int64(rawGateRecheck) && g.mu.TryLock() {
		if now-g.checked.Load() >= int64(rawGateRecheck) {
			if g.limited == 0 {
				g.limited = -1
				if memoryLimited() {
					g.limited = 1
				}
			}
			g.open.Store(g.limited < 0 && runtime.GOMAXPROCS(0) >= 2 && dirtyBelowBackground(g.vmstat))
			g.checked.Store(now)
		}
		g.mu.Unlock()
	}
	return g.open.Load()
}

// dirtyBelowBackground reports whether the dirty and writeback pages in
// the vmstat file are below its dirty background threshold; false when a
// figure is missing.
func dirtyBelowBackground(vmstat string) bool {
	b, err := os.ReadFile(vmstat)
	if err != nil {
		return false
	}
	var dirty, writeback, background int64 = -1, -1, -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "nr_dirty":
			dst = &dirty
		case "nr_writeback":
			dst = &writeback
		case "nr_dirty_background_threshold":
			dst = &background
		default:
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
			*dst = n
		}
	}
	return dirty >= 0 && writeback >= 0 && background > 0 && dirty+writeback < background
}

// memoryLimited reports whether a cgroup memory limit applies to this
// process (v2: memory.max or memory.high of its group or an ancestor; v1:
// memory.limit_in_bytes of its memory group), or whether that cannot be
// told.
func memoryLimited() bool {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return true
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
				continue // the unified hierarchy is not mounted there
			}
			for dir := filepath.Join("/sys/fs/cgroup", parts[2]); strings.HasPrefix(dir, "/sys/fs/cgroup/"); dir = filepath.Dir(dir) {
				for _, f := range []string{"memory.max", "memory.high"} {
					if v, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.TrimSpace(string(v)) != "max" {
						return true
					}
				}
			}
		case slicesContainsField(parts[1], "memory"):
			v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			if err != nil {
				continue
			}
			// v1 reports no limit as the largest page-aligned int64.
			if n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err != nil || n < 1<<62 {
				return true
			}
		}
	}
	return false
}

func slicesContainsField(list, name string) bool {
	for f := range strings.SplitSeq(list, ",") {
		if f == name {
			return true
		}
	}
	return false
}

// localFS reports whether the file behind fd is on a local file system
// whose buffered writes only copy into the page cache: ext4 or xfs on a
// block device that does not need stable pages, or tmpfs. A device that
// needs them (integrity checksums, some RAID levels) makes a write to a
// page under writeback wait for the disk; so do btrfs's checksums.
func localFS(fd uintptr) bool {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(fd), &fs); err != nil {
		return false
	}
	switch uint32(fs.Type) {
	case unix.TMPFS_MAGIC:
		return true
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC:
	default:
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return false
	}
	return !stableWrites(unix.Major(st.Dev), unix.Minor(st.Dev))
}

// stableWrites reports whether block device major:minor (or the disk of
// that partition) needs stable pages during writeback, or whether that
// cannot be told.
func stableWrites(major, minor uint32) bool {
	dev := "/sys/dev/block/" + strconv.FormatUint(uint64(major), 10) + ":" + strconv.FormatUint(uint64(minor), 10)
	for _, p := range []string{dev + "/queue/stable_writes", dev + "/../queue/stable_writes"} {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b)) != "0"
		}
	}
	return true
}

// rawAppender is a segment file's memory of its previous append, and the
// raw write in progress. Appends to a file are serialised by its log.
type rawAppender struct {
	end   atomic.Int64 // where the previous append ended
	at    atomic.Int64 // when it was made (unix nanoseconds), 0: none
	local atomic.Int32 // local file system: 0 unknown, 1 yes, -1 no
	conn  atomic.Pointer[fileConn]

	// the raw write in progress, for pwriteFn (bound once: a write
	// allocates nothing)
	b        []byte
	off      int64
	n        int
	done     bool
	err      unix.Errno
	pwriteFn func(fd uintptr)
}

// fileConn is an open file's descriptor access, kept while it stays open.
type fileConn struct {
	f  *os.File
	rc syscall.RawConn
}

// forget makes the next append an ordinary one (the file changed under
// the appends: a truncation or another write).
func (a *rawAppender) forget() { a.at.Store(0) }

// append writes b at off to f, raw when the conditions above hold.
func (a *rawAppender) append(f File, b []byte, off int64) (int, error) {
	now := time.Now().UnixNano()
	if of, ok := f.(*os.File); ok && len(b) > 0 && a.end.Load() == off && now-a.at.Load() < int64(rawAppendRecent) && rawGate.allows(now) {
		if n, done, err := a.raw(of, b, off); done {
			if err == nil {
				a.end.Store(off + int64(n))
				a.at.Store(now)
			}
			return n, err
		}
	}
	n, err := f.WriteAt(b, off)
	if err == nil {
		a.end.Store(off + int64(n))
		a.at.Store(now)
	}
	return n, err
}

// raw writes b at off with raw pwrite calls; done is false when the file
// is not on a local file system (nothing was written).
func (a *rawAppender) raw(f *os.File, b []byte, off int64) (int, bool, error) {
	c := a.conn.Load()
	if c == nil || c.f != f {
		rc, err := f.SyscallConn()
		if err != nil {
			return 0, false, nil
		}
		c = &fileConn{f: f, rc: rc}
		a.conn.Store(c)
	}
	if a.pwriteFn == nil {
		a.pwriteFn = a.pwrite
	}
	a.b, a.off, a.n, a.done, a.err = b, off, 0, false, 0
	cerr := c.rc.Control(a.pwriteFn)
	n, done, e := a.n, a.done, a.err
	a.b = nil
	switch {
	case cerr != nil:
		return 0, true, cerr
	case e != 0:
		return n, true, &os.PathError{Op: "write", Path: f.Name(), Err: e}
	}
	return n, done, nil
}

func (a *rawAppender) pwrite(fd uintptr) {
	switch a.local.Load() {
	case 0:
		l := int32(-1)
		if localFS(fd) {
			l = 1
		}
		a.local.Store(l)
		if l < 0 {
			return
		}
	case -1:
		return
	}
	a.done = true
	rawAppends.Add(1)
	for a.n < len(a.b) {
		m, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&a.b[a.n])), uintptr(len(a.b)-a.n), uintptr(a.off+int64(a.n)), 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			a.err = e
			return
		case m == 0:
			a.err = unix.EIO
			return
		}
		a.n += int(m)
	}
}
