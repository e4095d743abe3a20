package embed

// The disk of a node: the storage.FS its logs go through, with the faults
// the Cluster injects. A node's disk outlives the node's restarts (a slow
// or failing disk is still slow or failing after a restart, until Heal);
// each start of the node gets its own nodeFS over it, which Kill turns
// into a dead process's view: nothing written after the kill lands.

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/silkworm/silkworm/internal/storage"
)

// diskFault is what a disk does to a write or fsync.
type diskFault int

const (
	diskOK   diskFault = iota
	diskEIO            // every write, fsync and change fails with EIO
	diskFull           // every write fails with ENOSPC
	diskTorn           // the next segment write stops at tornAt, then diskEIO
)

// errKilled is the error a killed node's writes get (they never happen:
// the process is gone as far as the disk is concerned).
var errKilled = errors.New("embed: node killed")

// disk is one node's disk faults. Safe for concurrent use.
type disk struct {
	mu     sync.Mutex // guards the fields below
	delay  time.Duration
	fault  diskFault
	tornAt int
}

func (d *disk) set(f func(d *disk)) {
	d.mu.Lock()
	f(d)
	d.mu.Unlock()
}

func (d *disk) state() (time.Duration, diskFault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.delay, d.fault
}

// tear fires a pending torn write: it returns how many bytes of the write
// land (-1 when no torn write is pending) and leaves the disk failing.
func (d *disk) tear() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fault != diskTorn {
		return -1
	}
	d.fault = diskEIO
	return d.tornAt
}

// nodeFS is the storage.FS of one run of a node. Safe for concurrent use.
type nodeFS struct {
	inner storage.FS
	disk  *disk

	killMu sync.Mutex // guards killed's closing
	killed chan struct{}
	dead   bool
	// injected counts the operations an injected fault failed.
	injected atomic.Int64
}

// faulted reports whether an injected fault (or the kill) failed an
// operation of this run.
func (fs *nodeFS) faulted() bool { return fs.injected.Load() > 0 || fs.isKilled() }

func newNodeFS(inner storage.FS, d *disk) *nodeFS {
	return &nodeFS{inner: inner, disk: d, killed: make(chan struct{})}
}

// kill refuses every change from now on and wakes writes waiting on a slow
// disk (they fail).
func (fs *nodeFS) kill() {
	fs.killMu.Lock()
	defer fs.killMu.Unlock()
	if !fs.dead {
		fs.dead = true
		close(fs.killed)
	}
}

func (fs *nodeFS) isKilled() bool {
	select {
	case <-fs.killed:
		return true
	default:
		return false
	}
}

// op is called before each change to the disk: it waits the slow disk's
// delay when wait is set and returns the error the change gets, if any.
// write tells writes (ENOSPC applies) from other changes.
func (fs *nodeFS) op(name, what string, wait, write bool) error {
	if fs.isKilled() {
		return &os.PathError{Op: what, Path: name, Err: errKilled}
	}
	err := fs.fault(name, what, wait, write)
	if err != nil {
		fs.injected.Add(1)
	}
	return err
}

func (fs *nodeFS) fault(name, what string, wait, write bool) error {
	delay, fault := fs.disk.state()
	if wait && delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-fs.killed:
			t.Stop()
			return &os.PathError{Op: what, Path: name, Err: errKilled}
		}
		// The fault may have changed while the write waited.
		_, fault = fs.disk.state()
	}
	switch {
	case fault == diskEIO:
		return &os.PathError{Op: what, Path: name, Err: syscall.EIO}
	case fault == diskFull && write:
		return &os.PathError{Op: what, Path: name, Err: syscall.ENOSPC}
	}
	return nil
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

func (fs *nodeFS) OpenFile(name string, flag int, perm os.FileMode) (storage.File, error) {
	if flag&writeFlags != 0 {
		if err := fs.op(name, "open", false, false); err != nil {
			return nil, err
		}
	}
	f, err := fs.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &nodeFile{File: f, fs: fs}, nil
}

func (fs *nodeFS) Remove(name string) error {
	if err := fs.op(name, "remove", false, false); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

func (fs *nodeFS) RemoveAll(path string) error {
	if err := fs.op(path, "removeall", false, false); err != nil {
		return err
	}
	return fs.inner.RemoveAll(path)
}

func (fs *nodeFS) Rename(oldpath, newpath string) error {
	if err := fs.op(oldpath, "rename", false, false); err != nil {
		return err
	}
	return fs.inner.Rename(oldpath, newpath)
}

func (fs *nodeFS) MkdirAll(path string, perm os.FileMode) error {
	if err := fs.op(path, "mkdir", false, false); err != nil {
		return err
	}
	return fs.inner.MkdirAll(path, perm)
}

func (fs *nodeFS) ReadDir(name string) ([]os.DirEntry, error) { return fs.inner.ReadDir(name) }
func (fs *nodeFS) Stat(name string) (os.FileInfo, error)      { return fs.inner.Stat(name) }

func (fs *nodeFS) SyncDir(name string) error {
	if err := fs.op(name, "fsync", true, false); err != nil {
		return err
	}
	return fs.inner.SyncDir(name)
}

// nodeFile is a file of a nodeFS. Reads pass through; writes, fsyncs and
// truncations see the disk's faults.
type nodeFile struct {
	storage.File
	fs *nodeFS
}

// SyscallConn exposes the inner file's descriptor (an *os.File's), so
// fetch responses still go out with sendfile through the wrapper.
func (f *nodeFile) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := f.File.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// isSegment reports whether name is a log segment, where torn writes land.
func isSegment(name string) bool { return strings.HasSuffix(name, ".log") }

func (f *nodeFile) Write(p []byte) (int, error) {
	if err := f.fs.op(f.Name(), "write", true, true); err != nil {
		return 0, err
	}
	if isSegment(f.Name()) {
		if n := f.fs.disk.tear(); n >= 0 {
			f.fs.injected.Add(1)
			m, _ := f.File.Write(p[:min(n, len(p))])
			return m, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EIO}
		}
	}
	return f.File.Write(p)
}

func (f *nodeFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.op(f.Name(), "write", true, true); err != nil {
		return 0, err
	}
	if isSegment(f.Name()) {
		if n := f.fs.disk.tear(); n >= 0 {
			f.fs.injected.Add(1)
			m, _ := f.File.WriteAt(p[:min(n, len(p))], off)
			return m, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EIO}
		}
	}
	return f.File.WriteAt(p, off)
}

func (f *nodeFile) Sync() error {
	if err := f.fs.op(f.Name(), "fsync", true, false); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *nodeFile) Truncate(size int64) error {
	if err := f.fs.op(f.Name(), "truncate", false, false); err != nil {
		return err
	}
	return f.File.Truncate(size)
}
