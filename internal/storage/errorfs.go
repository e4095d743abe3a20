package storage

import (
	"errors"
	"os"
	"strings"
	"sync"
)

// ErrInjected is the error returned by ErrorFS for an injected failure.
var ErrInjected = errors.New("injected I/O error")

// ErrorFS wraps an FS and fails chosen writes or fsyncs, for tests of the
// log's failure handling (inside this package and in higher layers).
// Safe for concurrent use.
type ErrorFS struct {
	Inner FS

	mu       sync.Mutex
	rules    []*faultRule
	injected int
}

type faultRule struct {
	sync    bool   // fail Sync instead of Write/WriteAt
	suffix  string // only files whose name ends with suffix
	skip    int    // operations to let through before failing
	partial int    // bytes to write before failing (torn write); writes only
	fired   bool
}

// NewErrorFS wraps inner (OSFS when nil).
func NewErrorFS(inner FS) *ErrorFS {
	if inner == nil {
		inner = OSFS
	}
	return &ErrorFS{Inner: inner}
}

// FailWrite makes the write that comes after skip more successful writes to
// a file named ...suffix fail with ErrInjected, after writing only the first
// partial bytes of its buffer (0 = nothing, a torn write otherwise). The rule
// fires once.
func (e *ErrorFS) FailWrite(suffix string, skip, partial int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules = append(e.rules, &faultRule{suffix: suffix, skip: skip, partial: partial})
}

// FailSync makes the fsync that comes after skip more successful fsyncs of a
// file named ...suffix fail with ErrInjected. The rule fires once.
func (e *ErrorFS) FailSync(suffix string, skip int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules = append(e.rules, &faultRule{sync: true, suffix: suffix, skip: skip})
}

// Injected is the number of failures injected so far.
func (e *ErrorFS) Injected() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.injected
}

// match returns the rule that fails this operation, or nil.
func (e *ErrorFS) match(name string, sync bool) *faultRule {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.rules {
		if r.fired || r.sync != sync || !strings.HasSuffix(name, r.suffix) {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		r.fired = true
		e.injected++
		return r
	}
	return nil
}

func (e *ErrorFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := e.Inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *ErrorFS) Remove(name string) error                     { return e.Inner.Remove(name) }
func (e *ErrorFS) RemoveAll(path string) error                  { return e.Inner.RemoveAll(path) }
func (e *ErrorFS) Rename(oldpath, newpath string) error         { return e.Inner.Rename(oldpath, newpath) }
func (e *ErrorFS) MkdirAll(path string, perm os.FileMode) error { return e.Inner.MkdirAll(path, perm) }
func (e *ErrorFS) ReadDir(name string) ([]os.DirEntry, error)   { return e.Inner.ReadDir(name) }
func (e *ErrorFS) Stat(name string) (os.FileInfo, error)        { return e.Inner.Stat(name) }
func (e *ErrorFS) SyncDir(name string) error                    { return e.Inner.SyncDir(name) }

type errorFile struct {
	File
	fs *ErrorFS
}

func (f *errorFile) Write(p []byte) (int, error) {
	if r := f.fs.match(f.Name(), false); r != nil {
		n := min(r.partial, len(p))
		if n > 0 {
			if _, err := f.File.Write(p[:n]); err != nil {
				return 0, err
			}
		}
		return n, ErrInjected
	}
	return f.File.Write(p)
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if r := f.fs.match(f.Name(), false); r != nil {
		n := min(r.partial, len(p))
		if n > 0 {
			if _, err := f.File.WriteAt(p[:n], off); err != nil {
				return 0, err
			}
		}
		return n, ErrInjected
	}
	return f.File.WriteAt(p, off)
}

func (f *errorFile) Sync() error {
	if r := f.fs.match(f.Name(), true); r != nil {
		return ErrInjected
	}
	return f.File.Sync()
}
