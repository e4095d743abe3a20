package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOffsetCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, recoveryPointCheckpointFile)
	want := map[TopicPartition]int64{{"a", 0}: 5, {"a", 1}: 0, {"b.c-d", 12}: 1 << 40}
	if err := writeFileAtomic(OSFS, path, encodeOffsetCheckpoint(want)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "0\n3\na 0 5\na 1 0\n") {
		t.Fatalf("checkpoint text %q", data)
	}
	got, err := readOffsetCheckpoint(OSFS, path)
	if err != nil || len(got) != 3 || got[TopicPartition{"b.c-d", 12}] != 1<<40 {
		t.Fatalf("read %v %v", got, err)
	}
	if got, err := readOffsetCheckpoint(OSFS, filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Fatalf("missing checkpoint: %v %v", got, err)
	}
	for _, bad := range []string{"1\n0\n", "0\n2\na 0 1\n", "0\n1\na x 1\n"} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := readOffsetCheckpoint(OSFS, path); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("bad checkpoint %q: %v", bad, err)
		}
	}
	ep := []EpochEntry{{0, 0}, {3, 100}}
	epath := filepath.Join(dir, leaderEpochCheckpointFile)
	writeFileAtomic(OSFS, epath, encodeEpochCheckpoint(ep))
	if got, err := readEpochCheckpoint(OSFS, epath); err != nil || len(got) != 2 || got[1] != ep[1] {
		t.Fatalf("epoch checkpoint %v %v", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

func TestMetaProperties(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m := e.open()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(e.dir, metaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"version=1\n", "node.id=1\n", "cluster.id=test-cluster\n", "directory.id="} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("meta.properties lacks %q:\n%s", want, data)
		}
	}
	// Same node reopens; another node id is refused with the file named.
	e.open().Close()
	cfg := e.managerConfig()
	cfg.NodeID = 2
	_, err = OpenManager(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(e.dir, metaPropertiesFile)) {
		t.Fatalf("node id mismatch: %v", err)
	}
	cfg = e.managerConfig()
	cfg.ClusterID = "other"
	if _, err := OpenManager(cfg, nil); err == nil {
		t.Fatal("cluster id mismatch accepted")
	}
}

func TestManagerLifecycle(t *testing.T) {
	e := newEnv(t, tinyConfig())
	cfg := e.managerConfig()
	cfg.Dirs = append(cfg.Dirs, filepath.Join(t.TempDir(), "second"))
	m, err := OpenManager(cfg, func(string) Config { return e.cfg })
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte{9}
	for p := int32(0); p < 4; p++ {
		l, err := m.GetOrCreate("orders", p, id, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, int(p)+1, variedSpec)
	}
	if _, err := m.GetOrCreate("orders", 0, [16]byte{8}, e.cfg); !errors.Is(err, ErrInconsistentTopicID) {
		t.Fatalf("other topic id: %v", err)
	}
	if _, err := m.GetOrCreate("../evil", 0, id, e.cfg); err == nil {
		t.Fatal("bad topic name accepted")
	}
	sizes := m.DirSizes()
	if len(sizes) != 2 || len(sizes[cfg.Dirs[0]]) != 2 || len(sizes[cfg.Dirs[1]]) != 2 {
		t.Fatalf("partitions not spread over dirs: %v", sizes)
	}
	if err := m.Delete("orders", 3); err != nil {
		t.Fatal(err)
	}
	if m.Get("orders", 3) != nil {
		t.Fatal("deleted log still returned")
	}
	waitFor(t, "deleted partition dir removed", func() bool {
		for _, d := range cfg.Dirs {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "orders-3") {
					return false
				}
			}
		}
		return true
	})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range cfg.Dirs {
		if ok, _ := fileExists(OSFS, filepath.Join(d, cleanShutdownFile)); !ok {
			t.Fatalf("no clean shutdown marker in %s", d)
		}
	}
	m2, err := OpenManager(cfg, func(string) Config { return e.cfg })
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	for _, d := range cfg.Dirs {
		if ok, _ := fileExists(OSFS, filepath.Join(d, cleanShutdownFile)); ok {
			t.Fatalf("clean shutdown marker not removed in %s", d)
		}
	}
	if n := len(m2.Logs()); n != 3 {
		t.Fatalf("%d logs after reopen", n)
	}
	for p := int32(0); p < 3; p++ {
		l := m2.Get("orders", p)
		if l.TopicID() != id || l.LogEndOffset() == 0 {
			t.Fatalf("partition %d: topic id %v LEO %d", p, l.TopicID(), l.LogEndOffset())
		}
	}
	data, _ := os.ReadFile(filepath.Join(m2.Get("orders", 0).Dir(), partitionMetadataFile))
	if string(data) != "version: 0\ntopic_id: "+FormatUUID(id)+"\n" {
		t.Fatalf("partition.metadata %q", data)
	}
}

// Appends and reads run concurrently (run with -race).
func TestConcurrentAppendRead(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	defer m.Close()
	const n = 400
	var wg sync.WaitGroup
	done := make(chan struct{})
	errc := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(0)
			for {
				select {
				case <-done:
					return
				default:
				}
				rr, err := l.Read(off, 4096, l.EndPosition(), true)
				if err != nil {
					errc <- err
					return
				}
				if rr.Size == 0 {
					continue
				}
				buf := make([]byte, rr.Size)
				if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
					errc <- err
					return
				}
				for len(buf) > 0 {
					h := makeHeaderFrom(buf)
					if h.BaseOffset > off {
						errc <- errors.New("gap in read")
						return
					}
					off = h.LastOffset() + 1
					buf = buf[h.Size():]
				}
			}
		}()
	}
	appendN(t, l, n, variedSpec)
	close(done)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
}
