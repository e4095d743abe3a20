package embed

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/silkworm/silkworm/internal/storage"
)

// Segment files keep their descriptor through the wrapper, so fetches are
// still answered with sendfile.
func TestDiskFileKeepsSendfile(t *testing.T) {
	fs := newNodeFS(storage.OSFS, &disk{})
	f, err := fs.OpenFile(filepath.Join(t.TempDir(), "0.log"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, ok := f.(syscall.Conn)
	if !ok {
		t.Fatal("the wrapper's file is not a syscall.Conn")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	if err := rc.Control(func(d uintptr) { fd = d }); err != nil || fd == 0 {
		t.Fatalf("no descriptor: %v", err)
	}
}

// After a kill nothing more lands: writes, fsyncs, creations and renames
// fail, reads still work (the file as it was at the kill).
func TestKilledDiskRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	fs := newNodeFS(storage.OSFS, &disk{})
	f, err := fs.OpenFile(filepath.Join(dir, "0.log"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("before")); err != nil {
		t.Fatal(err)
	}
	fs.kill()
	if _, err := f.Write([]byte("after")); !errors.Is(err, errKilled) {
		t.Fatalf("write after kill: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, errKilled) {
		t.Fatalf("fsync after kill: %v", err)
	}
	if _, err := fs.OpenFile(filepath.Join(dir, "new"), os.O_CREATE|os.O_WRONLY, 0o644); !errors.Is(err, errKilled) {
		t.Fatalf("create after kill: %v", err)
	}
	if err := fs.Rename(filepath.Join(dir, "0.log"), filepath.Join(dir, "1.log")); !errors.Is(err, errKilled) {
		t.Fatalf("rename after kill: %v", err)
	}
	buf := make([]byte, 6)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "before" {
		t.Fatalf("read after kill: %q, %v", buf, err)
	}
}

// The disk's faults: EIO on writes and fsyncs, ENOSPC on writes only, a
// torn segment write landing its first bytes and leaving the disk failed.
func TestDiskFaults(t *testing.T) {
	dir := t.TempDir()
	d := &disk{}
	fs := newNodeFS(storage.OSFS, d)
	f, err := fs.OpenFile(filepath.Join(dir, "0.log"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	d.set(func(d *disk) { d.fault = diskFull })
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync on a full disk: %v", err)
	}
	d.set(func(d *disk) { d.fault = diskEIO })
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write on a failed disk: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync on a failed disk: %v", err)
	}
	d.set(func(d *disk) { d.fault, d.tornAt = diskTorn, 3 })
	if n, err := f.Write([]byte("abcdef")); n != 3 || !errors.Is(err, syscall.EIO) {
		t.Fatalf("torn write: %d bytes, %v", n, err)
	}
	if _, err := f.Write([]byte("g")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after a torn write: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "0.log")); string(b) != "abc" {
		t.Fatalf("file holds %q after a write torn at byte 3", b)
	}
}
