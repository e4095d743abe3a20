package storage

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// batchSpec describes a test batch; zero values give a plain batch of one
// record without a producer id.
type batchSpec struct {
	records     int
	valueSize   int
	ts          int64 // first timestamp; record i gets ts+i
	pid         int64
	epoch       int16
	seq         int32
	baseOffset  int64
	leaderEpoch int32
	fill        byte
}

// makeBatch builds a valid, uncompressed v2 batch.
func makeBatch(s batchSpec) []byte {
	if s.records == 0 {
		s.records = 1
	}
	if s.pid == 0 {
		s.pid = -1
	}
	if s.pid < 0 {
		s.epoch, s.seq = -1, -1
	}
	var recs []byte
	for i := 0; i < s.records; i++ {
		var body []byte
		body = append(body, 0) // attributes
		body = binary.AppendVarint(body, int64(i))
		body = binary.AppendVarint(body, int64(i))
		body = binary.AppendVarint(body, -1) // null key
		body = binary.AppendVarint(body, int64(s.valueSize))
		body = append(body, bytes.Repeat([]byte{s.fill + byte(i)}, s.valueSize)...)
		body = binary.AppendVarint(body, 0) // no headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	b := make([]byte, record.HeaderSize, record.HeaderSize+len(recs))
	be := binary.BigEndian
	be.PutUint64(b[record.OffsetBaseOffset:], uint64(s.baseOffset))
	be.PutUint32(b[record.OffsetBatchLength:], uint32(record.HeaderSize-record.LogOverhead+len(recs)))
	be.PutUint32(b[record.OffsetPartitionLeaderEpoch:], uint32(s.leaderEpoch))
	b[record.OffsetMagic] = record.MagicV2
	be.PutUint16(b[record.OffsetAttributes:], 0)
	be.PutUint32(b[record.OffsetLastOffsetDelta:], uint32(s.records-1))
	be.PutUint64(b[record.OffsetFirstTimestamp:], uint64(s.ts))
	be.PutUint64(b[record.OffsetMaxTimestamp:], uint64(s.ts+int64(s.records-1)))
	be.PutUint64(b[record.OffsetProducerID:], uint64(s.pid))
	be.PutUint16(b[record.OffsetProducerEpoch:], uint16(s.epoch))
	be.PutUint32(b[record.OffsetBaseSequence:], uint32(s.seq))
	be.PutUint32(b[record.OffsetRecordCount:], uint32(s.records))
	b = append(b, recs...)
	be.PutUint32(b[record.OffsetCRC:], record.ComputeCRC(b))
	return b
}

// fakeClock is a settable clock for segment.ms and retention tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// newFakeClock starts at 1,000,000 ms so test batches with small timestamps
// are recent (not rolled by segment.ms, not expired).
func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_000_000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type testEnv struct {
	t     *testing.T
	dir   string
	fs    FS
	clock *fakeClock
	cfg   Config
}

func newEnv(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	return &testEnv{t: t, dir: t.TempDir(), fs: OSFS, clock: newFakeClock(), cfg: cfg}
}

func (e *testEnv) managerConfig() ManagerConfig {
	return ManagerConfig{Dirs: []string{e.dir}, NodeID: 1, ClusterID: "test-cluster", FS: e.fs, Clock: e.clock.Now}
}

func (e *testEnv) open() *Manager {
	e.t.Helper()
	m, err := OpenManager(e.managerConfig(), func(string) Config { return e.cfg })
	if err != nil {
		e.t.Fatalf("OpenManager: %v", err)
	}
	return m
}

// openLog opens the manager and the log "t-0".
func (e *testEnv) openLog() (*Manager, *Log) {
	e.t.Helper()
	m := e.open()
	l, err := m.GetOrCreate("t", 0, [16]byte{1, 2, 3}, e.cfg)
	if err != nil {
		e.t.Fatalf("GetOrCreate: %v", err)
	}
	return m, l
}

func (e *testEnv) partDir() string { return filepath.Join(e.dir, "t-0") }

// crash simulates kill -9: background work stops and files are closed
// without flushing, trimming indexes, snapshots, checkpoints or marker.
func crash(m *Manager) {
	close(m.stop)
	m.wg.Wait()
	for _, l := range m.Logs() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.asyncFlushes.Wait()
		closeAll(l.segments())
	}
}

// appendN appends n leader batches and returns them as stored (patched).
func appendN(t *testing.T, l *Log, n int, spec func(i int) batchSpec) [][]byte {
	t.Helper()
	var out [][]byte
	for i := 0; i < n; i++ {
		b := makeBatch(spec(i))
		res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: 3})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if res.Duplicate {
			t.Fatalf("append %d: unexpected duplicate", i)
		}
		out = append(out, b)
	}
	return out
}

// readAll reads the whole log from offset from and returns the batches.
func readAll(t *testing.T, l *Log, from int64, maxBytes int32) [][]byte {
	t.Helper()
	var out [][]byte
	off := from
	for off < l.LogEndOffset() {
		rr, err := l.Read(off, maxBytes, l.EndPosition(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if rr.Size == 0 {
			t.Fatalf("read at %d: empty below log end %d", off, l.LogEndOffset())
		}
		buf := make([]byte, rr.Size)
		if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
			t.Fatalf("read file at %d: %v", rr.Pos, err)
		}
		for len(buf) > 0 {
			h, err := record.ParseHeader(buf)
			if err != nil {
				t.Fatalf("parse batch at offset %d: %v", off, err)
			}
			if h.Size() > int64(len(buf)) {
				t.Fatalf("partial batch in read result at offset %d", off)
			}
			out = append(out, buf[:h.Size()])
			off = h.LastOffset() + 1
			buf = buf[h.Size():]
		}
	}
	return out
}

func checkBatches(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d batches, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tinyConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 2048
	c.IndexIntervalBytes = 1
	c.MaxIndexSize = 64
	c.FileDeleteDelayMs = 0
	c.RetentionMs = -1
	return c
}

var _ = math.MaxInt64

func makeHeader(t *testing.T, s batchSpec) record.Header {
	t.Helper()
	h, err := record.ParseHeader(makeBatch(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func makeHeaderFrom(b []byte) record.Header {
	h, _ := record.ParseHeader(b)
	return h
}

// indexEntries returns every offset-index entry of s (file and tail).
func indexEntries(t *testing.T, s *segment) []offsetEntry {
	t.Helper()
	ents := slices.Clone(s.index.persistedEntries())
	s.index.mu.RLock()
	ents = append(ents, s.index.tail...)
	s.index.mu.RUnlock()
	if len(ents) != s.index.len() {
		t.Fatalf("segment %d: %d index entries readable of %d", s.base, len(ents), s.index.len())
	}
	return ents
}
