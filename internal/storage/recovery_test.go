package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/record"
)

// lastLogFile returns the path of the newest segment's .log.
func lastLogFile(t *testing.T, e *testEnv) string {
	t.Helper()
	logs := segmentFiles(t, e.partDir(), logSuffix)
	return filepath.Join(e.partDir(), logs[len(logs)-1])
}

func TestCrashRecovery(t *testing.T) {
	damages := map[string]func(t *testing.T, path string, last []byte){
		"garbage": func(t *testing.T, path string, _ []byte) {
			appendToFile(t, path, []byte("this is not a record batch at all, just noise......................"))
		},
		"tornHalfBatch": func(t *testing.T, path string, _ []byte) {
			b := makeBatch(batchSpec{records: 4, valueSize: 100})
			appendToFile(t, path, b[:len(b)/2])
		},
		"flippedByteInLastBatch": func(t *testing.T, path string, last []byte) {
			fi, _ := os.Stat(path)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// A byte inside the CRC range of the last batch (its last record).
			off := fi.Size() - 3
			var one [1]byte
			f.ReadAt(one[:], off)
			one[0] ^= 0x55
			f.WriteAt(one[:], off)
		},
		"zeroTail": func(t *testing.T, path string, _ []byte) {
			appendToFile(t, path, make([]byte, 4096))
		},
	}
	for _, cname := range []string{"default", "tinySegments", "tinyIndexInterval"} {
		cfg := configMatrix()[cname]
		for dname, damage := range damages {
			t.Run(cname+"/"+dname, func(t *testing.T) {
				e := newEnv(t, cfg)
				m, l := e.openLog()
				want := appendN(t, l, 50, variedSpec)
				crash(m)
				damage(t, lastLogFile(t, e), want[len(want)-1])
				keep := want
				if dname == "flippedByteInLastBatch" {
					keep = want[:len(want)-1]
				}
				m2 := e.open()
				l2 := m2.Get("t", 0)
				if l2 == nil {
					t.Fatal("log not loaded")
				}
				checkBatches(t, readAll(t, l2, 0, 1<<20), keep)
				h, _ := record.ParseHeader(keep[len(keep)-1])
				if l2.LogEndOffset() != h.LastOffset()+1 {
					t.Fatalf("LEO %d, want %d", l2.LogEndOffset(), h.LastOffset()+1)
				}
				more := appendN(t, l2, 10, variedSpec)
				checkEveryOffset(t, l2, append(keep[:len(keep):len(keep)], more...))
				if err := m2.Close(); err != nil {
					t.Fatal(err)
				}
				// A clean reopen keeps everything.
				m3 := e.open()
				defer m3.Close()
				checkBatches(t, readAll(t, m3.Get("t", 0), 0, 1<<20), append(keep[:len(keep):len(keep)], more...))
			})
		}
	}
}

func appendToFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// A corrupt batch in a middle segment truncates there and drops every later
// segment; nothing before it is lost.
func TestCrashRecoveryMiddleSegment(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	want := appendN(t, l, 60, func(i int) batchSpec { return batchSpec{valueSize: 200, fill: byte(i)} })
	segs := l.segments()
	if len(segs) < 5 {
		t.Fatalf("%d segments", len(segs))
	}
	victim := segs[2]
	crash(m)
	// Corrupt the second batch of segment 2.
	buf := make([]byte, batchPrefix)
	f, _ := os.OpenFile(victim.path(logSuffix), os.O_RDWR, 0)
	victim.log = f
	b0, _ := victim.readBounds(0, 1<<30, buf)
	if _, err := f.WriteAt([]byte{0xff, 0xff}, b0.size+record.HeaderSize+2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m2 := e.open()
	defer m2.Close()
	l2 := m2.Get("t", 0)
	if l2.NumSegments() != 3 || l2.LogEndOffset() != b0.lastOffset+1 {
		t.Fatalf("after recovery: %d segments, LEO %d, want 3 and %d", l2.NumSegments(), l2.LogEndOffset(), b0.lastOffset+1)
	}
	checkBatches(t, readAll(t, l2, 0, 1<<20), want[:b0.lastOffset+1])
	if n := len(segmentFiles(t, e.partDir(), logSuffix)); n != 3 {
		t.Fatalf("%d .log files left", n)
	}
}

// Segments below the recovery point are trusted: a clean close then a crash
// later only re-validates from the segment holding the recovery point.
func TestRecoveryPointCheckpoint(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	appendN(t, l, 40, func(i int) batchSpec { return batchSpec{valueSize: 200} })
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != l.LogEndOffset() {
		t.Fatalf("recovery point %d after flush, LEO %d", l.RecoveryPoint(), l.LogEndOffset())
	}
	m.checkpointTick()
	cp, err := readOffsetCheckpoint(OSFS, filepath.Join(e.dir, recoveryPointCheckpointFile))
	if err != nil || cp[TopicPartition{"t", 0}] != 40 {
		t.Fatalf("recovery point checkpoint %v %v", cp, err)
	}
	crash(m)
	m2 := e.open()
	defer m2.Close()
	if got := m2.Get("t", 0).LogEndOffset(); got != 40 {
		t.Fatalf("LEO %d", got)
	}
}

func TestIndexDamageIsRebuilt(t *testing.T) {
	for _, damage := range []string{"truncated", "missing", "garbage"} {
		t.Run(damage, func(t *testing.T) {
			cfg := tinyConfig()
			e := newEnv(t, cfg)
			m, l := e.openLog()
			want := appendN(t, l, 80, variedSpec)
			entries := map[int64]int{}
			for _, s := range l.segments() {
				entries[s.base] = s.index.len()
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			idx := segmentFiles(t, e.partDir(), indexSuffix)
			for _, name := range idx {
				p := filepath.Join(e.partDir(), name)
				switch damage {
				case "truncated":
					os.Truncate(p, 5)
				case "missing":
					os.Remove(p)
					os.Remove(strings.TrimSuffix(p, indexSuffix) + timeIndexSuffix)
				case "garbage":
					os.WriteFile(p, []byte("\x7f\xff\xff\xff\x7f\xff\xff\xff\x00\x00\x00\x01\x00\x00\x00\x01"), 0o644)
				}
			}
			m2 := e.open()
			defer m2.Close()
			l2 := m2.Get("t", 0)
			checkEveryOffset(t, l2, want)
			for _, s := range l2.segments() {
				if s.index.len() != entries[s.base] {
					t.Fatalf("segment %d index has %d entries after rebuild, had %d", s.base, s.index.len(), entries[s.base])
				}
			}
		})
	}
}

func TestUnreadableLogNamesFile(t *testing.T) {
	e := newEnv(t, tinyConfig())
	m, l := e.openLog()
	appendN(t, l, 5, variedSpec)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(e.partDir(), filenamePrefix(1000)+logSuffix)
	if err := os.Symlink("/nonexistent/segment", bad); err != nil {
		t.Fatal(err)
	}
	_, err := OpenManager(e.managerConfig(), nil)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %v does not name %s", err, bad)
	}
}

func TestWriteErrorTakesLogOffline(t *testing.T) {
	e := newEnv(t, tinyConfig())
	efs := NewErrorFS(OSFS)
	e.fs = efs
	m, l := e.openLog()
	want := appendN(t, l, 3, variedSpec)
	efs.FailWrite(logSuffix, 0, 17) // the next .log write is torn after 17 bytes
	_, err := l.Append(makeBatch(variedSpec(3)), AppendOptions{AssignOffsets: true})
	if !errors.Is(err, ErrLogOffline) || !errors.Is(err, ErrInjected) {
		t.Fatalf("append with failing write: %v", err)
	}
	// The file system works again, but the log stays offline.
	if _, err := l.Append(makeBatch(variedSpec(4)), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrLogOffline) {
		t.Fatalf("later append: %v", err)
	}
	if _, err := l.Read(0, 100, l.EndPosition(), true); !errors.Is(err, ErrLogOffline) {
		t.Fatalf("read of offline log: %v", err)
	}
	if !m.Dirs()[e.dir] {
		t.Fatal("log dir not marked offline")
	}
	m.Close()
	if ok, _ := fileExists(OSFS, filepath.Join(e.dir, cleanShutdownFile)); ok {
		t.Fatal("clean shutdown marker written for a dir with an offline log")
	}
	// Reopen: recovery drops the torn bytes, the three batches remain.
	e.fs = OSFS
	m2 := e.open()
	defer m2.Close()
	checkBatches(t, readAll(t, m2.Get("t", 0), 0, 1<<20), want)
}

func TestFsyncErrorTakesLogOffline(t *testing.T) {
	cfg := tinyConfig()
	cfg.FlushIntervalMessages = 1
	e := newEnv(t, cfg)
	efs := NewErrorFS(OSFS)
	e.fs = efs
	m, l := e.openLog()
	defer m.Close()
	appendN(t, l, 2, variedSpec)
	efs.FailSync(logSuffix, 0)
	if _, err := l.Append(makeBatch(variedSpec(2)), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrLogOffline) {
		t.Fatalf("append with failing fsync: %v", err)
	}
	if _, err := l.Append(makeBatch(variedSpec(3)), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrLogOffline) {
		t.Fatalf("later append: %v", err)
	}
	if efs.Injected() != 1 {
		t.Fatalf("injected %d failures", efs.Injected())
	}
}
