package storage

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// openRawGate opens the system-wide gate of raw appends (or closes it) for
// the test, without reading the system's state.
func openRawGate(t *testing.T, open bool) {
	t.Helper()
	checked, was := rawGate.checked.Load(), rawGate.open.Load()
	rawGate.checked.Store(math.MaxInt64 / 2) // no re-check
	rawGate.open.Store(open)
	t.Cleanup(func() {
		rawGate.checked.Store(checked)
		rawGate.open.Store(was)
	})
}

// TestAppendsGoRawOnlyWhenTheyCannotWait: an append is written raw only
// when it continues the previous append to its file and the gate is open;
// a first append, one after a truncation or another write, and any append
// while the gate is closed are ordinary writes. Either way the file holds
// exactly what was appended.
func TestAppendsGoRawOnlyWhenTheyCannotWait(t *testing.T) {
	if !localFSPath(t, t.TempDir()) {
		t.Skip("the temporary directory is not on a local file system")
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	h := newSegFile(OSFS, &clockCache{budget: 4}, path, f)
	defer h.Close()
	var want []byte
	step := func(name string, raw bool, data string) {
		t.Helper()
		before := rawAppends.Load()
		if _, err := h.Append([]byte(data), int64(len(want))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want = append(want, data...)
		if got := rawAppends.Load() - before; (got == 1) != raw {
			t.Errorf("%s: written raw %v, want %v", name, got == 1, raw)
		}
	}
	openRawGate(t, true)
	step("first append", false, "aaaa")
	step("contiguous append", true, "bbbbbb")
	step("next one", true, "cc")
	if err := h.Truncate(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	step("after a truncation", false, "dddd")
	step("contiguous again", true, "ee")
	h.app.at.Store(h.app.at.Load() - int64(rawAppendRecent))
	step("a second after the previous one", false, "ff")
	openRawGate(t, false)
	step("gate closed", false, "gg")
	got := make([]byte, len(want)+8)
	n, _ := h.ReadAt(got, 0)
	if !bytes.Equal(got[:n], want) {
		t.Fatalf("file holds %q, want %q", got[:n], want)
	}
}

func localFSPath(t *testing.T, dir string) bool {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return localFS(d.Fd())
}

// TestDirtyBelowBackground reads the kernel's dirty page figures.
func TestDirtyBelowBackground(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		vmstat string
		want   bool
	}{
		"below":     {"nr_free_pages 100\nnr_dirty 10\nnr_writeback 5\nnr_dirty_threshold 2000\nnr_dirty_background_threshold 1000\n", true},
		"at":        {"nr_dirty 990\nnr_writeback 10\nnr_dirty_background_threshold 1000\n", false},
		"above":     {"nr_dirty 5000\nnr_writeback 0\nnr_dirty_background_threshold 1000\n", false},
		"missing":   {"nr_dirty 10\nnr_dirty_background_threshold 1000\n", false},
		"malformed": {"nr_dirty x\nnr_writeback 0\nnr_dirty_background_threshold 1000\n", false},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tc.vmstat), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := dirtyBelowBackground(p); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if dirtyBelowBackground(filepath.Join(dir, "absent")) {
		t.Error("no vmstat file: open")
	}
}
