package storage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// withIndexPages shrinks index pages for one test.
func withIndexPages(t *testing.T, entries, wholeFilePages int) {
	oldEntries, oldWhole := indexPageEntries, indexWholeFilePages
	indexPageEntries, indexWholeFilePages = entries, wholeFilePages
	t.Cleanup(func() { indexPageEntries, indexWholeFilePages = oldEntries, oldWhole })
}

// pagedIndexLog appends 400 batches, each indexed, into segments of
// 64 KiB (dozens of 4-entry pages each), and reopens the log after a
// clean close so that every index is in its file and no page is read.
func pagedIndexLog(t *testing.T, damage func(dir string, segs []*segment)) (*Manager, *Log, [][]byte) {
	t.Helper()
	withIndexPages(t, 4, 1)
	cfg := tinyConfig()
	cfg.SegmentBytes = 64 << 10
	cfg.MaxIndexSize = 1 << 16
	e := newEnv(t, cfg)
	m, l := e.openLog()
	want := appendN(t, l, 400, variedSpec)
	if l.NumSegments() < 3 {
		t.Fatalf("only %d segments", l.NumSegments())
	}
	segs := l.segments()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if damage != nil {
		damage(e.partDir(), segs)
	}
	m2 := e.open()
	t.Cleanup(func() { m2.Close() })
	return m2, m2.Get("t", 0), want
}

func loadedPages(x *diskIndex[offsetEntry]) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, pg := range x.pages {
		if pg != nil {
			n++
		}
	}
	return n
}

// TestIndexPagesReadOnDemand: a lookup in a rolled segment's index reads
// the pages on its binary search's path, not the whole file, and finds
// what a search of every entry finds.
func TestIndexPagesReadOnDemand(t *testing.T) {
	_, l, want := pagedIndexLog(t, nil)
	s := l.segments()[0]
	all := s.index.persistedEntries()
	pages := (len(all) + indexPageEntries - 1) / indexPageEntries
	if pages < 16 {
		t.Fatalf("%d index entries: %d pages, too few to tell a search from a whole read", len(all), pages)
	}
	// At most one page per halving of the page count, plus the one found.
	limit := 2
	for n := pages; n > 1; n = (n + 1) / 2 {
		limit++
	}
	last := all[len(all)-1].rel
	for rel := int32(-1); rel <= last+1; rel++ {
		s.index.drop()
		got := s.index.lookup(rel)
		var wantPos int64
		for _, e := range all {
			if e.rel <= rel {
				wantPos = int64(e.pos)
			}
		}
		if got != wantPos {
			t.Fatalf("lookup(%d) = %d, want %d", rel, got, wantPos)
		}
		if n := loadedPages(&s.index.diskIndex); n > limit {
			t.Fatalf("lookup(%d) read %d of %d pages, want at most %d", rel, n, pages, limit)
		}
	}
	checkEveryOffset(t, l, want)
}

// TestIndexInsanePageIsRebuiltOrCut: an entry that does not grow, in the
// middle of a rolled segment's index, is found by the lookup that reads
// its page and the index is rebuilt from the log; in the active segment,
// which is not rebuilt, lookups use the entries before it. Reads stay
// right in both.
func TestIndexInsanePageIsRebuiltOrCut(t *testing.T) {
	var entries []int
	const bad = 9 // an entry of the third page
	m, l, want := pagedIndexLog(t, func(dir string, segs []*segment) {
		for _, s := range segs {
			entries = append(entries, s.index.len())
			p := filepath.Join(dir, filenamePrefix(s.base)+indexSuffix)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			var b [offsetEntrySize]byte
			binary.BigEndian.PutUint32(b[0:], 1)
			binary.BigEndian.PutUint32(b[4:], 1)
			if _, err := f.WriteAt(b[:], bad*offsetEntrySize); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	})
	_ = m
	checkEveryOffset(t, l, want)
	segs := l.segments()
	for i, s := range segs[:len(segs)-1] {
		s.index.drop()
		if got := s.index.persistedEntries(); len(got) != entries[i] {
			t.Fatalf("rolled segment %d: %d sane index entries after the lookups, want %d (rebuilt)", s.base, len(got), entries[i])
		}
	}
	active := segs[len(segs)-1]
	active.index.mu.RLock()
	sane := active.index.sane
	active.index.mu.RUnlock()
	if sane != bad {
		t.Fatalf("active segment: lookups use %d entries, want the %d before the damaged one", sane, bad)
	}
}

// BenchmarkIndexColdLookup measures the first lookup in a rolled
// segment's full .index (262,144 entries: a 1 GiB segment indexed every
// 4 KiB, Kafka's defaults), its index pages not in memory, and reports
// the bytes of entries the lookup left in memory.
//
//	go test ./internal/storage -run '^$' -bench 'IndexColdLookup'
func BenchmarkIndexColdLookup(b *testing.B) {
	const n = 1 << 18
	x := newOffsetIndex(OSFS, &clockCache{budget: DefaultIndexCacheBytes}, filepath.Join(b.TempDir(), "0.index"), n)
	ents := make([]offsetEntry, n)
	for i := range ents {
		ents[i] = offsetEntry{rel: int32(i*4 + 3), pos: int32(i*4096 + 1)}
	}
	if err := x.replace(ents); err != nil {
		b.Fatal(err)
	}
	var held int64
	i := 0
	for b.Loop() {
		x.drop()
		rel := int32((i * 7919) % (n * 4))
		if got, want := x.lookup(rel), int64(rel/4*4096+1); rel >= 3 && got != want && got != want-4096 {
			b.Fatalf("lookup(%d) = %d", rel, got)
		}
		_, cost := x.cache.stats()
		held += cost
		i++
	}
	b.ReportMetric(float64(held)/float64(b.N), "bytes-held/op")
}
