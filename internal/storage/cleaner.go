package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// Log compaction (Kafka's LogCleaner). See doc.go, "Log compaction", for
// the behaviour and the on-disk protocol; this file holds the cleaner
// threads, the choice of the log to clean and the cleaning pass.

const (
	cleanedSuffix         = ".cleaned"
	swapSuffix            = ".swap"
	cleanerCheckpointFile = "cleaner-offset-checkpoint"
	// offsetMapEntryBytes is what Kafka's SkimpyOffsetMap charges a key
	// (16-byte hash and 8-byte offset) against the dedupe buffer.
	offsetMapEntryBytes = 24
	// cleanerReadChunk is how much of a segment the cleaner reads at once.
	cleanerReadChunk = 1 << 20
)

// errCleanAborted: the pass stopped because the log was closed, deleted,
// truncated or its segments changed under it, or the manager is closing.
var errCleanAborted = errors.New("cleaning aborted")

// CleanStats describes one cleaning pass over a log.
type CleanStats struct {
	FirstDirtyOffset int64 // the cleaner checkpoint the pass started from
	EndOffset        int64 // the new checkpoint: offsets below it are clean
	Segments         int   // segments read and rewritten
	BytesRead        int64
	BytesWritten     int64
	RecordsRead      int64
	RecordsRetained  int64
	TombstonesPurged int64 // tombstones dropped because their delete horizon passed
}

// cleaner holds the cleaner checkpoints and which logs are being cleaned.
// Safe for concurrent use.
type cleaner struct {
	m          *Manager
	seeds      [2]maphash.Seed
	maxEntries int // offset map capacity of one pass

	mu          sync.Mutex
	checkpoints map[TopicPartition]int64 // first dirty offset per partition
	inProgress  map[*Log]bool
	uncleanable map[*Log]bool // a pass failed; skipped by the threads from now on
	// horizons holds, per partition, the earliest delete horizon of the
	// tombstones the last pass kept: once it passes, the log is worth a
	// pass even without dirty records (in memory only).
	horizons map[TopicPartition]int64
	// crashAt, when set (tests), is called at each step of a swap; true
	// stops the pass right there as if the process died.
	crashAt func(step string) bool
}

func newCleaner(m *Manager) *cleaner {
	buf := m.cfg.CleanerDedupeBufferSize
	if buf <= 0 {
		buf = DefaultManagerConfig("").CleanerDedupeBufferSize
	}
	threads := int64(max(m.cfg.CleanerThreads, 1))
	entries := int(float64(buf/threads/offsetMapEntryBytes) * 0.9)
	return &cleaner{
		m: m, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, maxEntries: max(entries, 1),
		checkpoints: map[TopicPartition]int64{}, inProgress: map[*Log]bool{}, uncleanable: map[*Log]bool{},
		horizons: map[TopicPartition]int64{},
	}
}

// loadCheckpoint reads the cleaner checkpoint of a log dir.
func (c *cleaner) loadCheckpoint(d *logDir) error {
	cp, err := readOffsetCheckpoint(c.m.fs, filepath.Join(d.path, cleanerCheckpointFile))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for tp, off := range cp {
		c.checkpoints[tp] = off
	}
	return nil
}

// writeCheckpoint rewrites the cleaner checkpoint of a log dir from the
// partitions the manager holds there.
func (c *cleaner) writeCheckpoint(d *logDir) error {
	d.cpMu.Lock()
	defer d.cpMu.Unlock()
	c.m.mu.Lock()
	var tps []TopicPartition
	for tp, dd := range c.m.dirOf {
		if dd == d {
			tps = append(tps, tp)
		}
	}
	c.m.mu.Unlock()
	out := map[TopicPartition]int64{}
	c.mu.Lock()
	for _, tp := range tps {
		if off, ok := c.checkpoints[tp]; ok {
			out[tp] = off
		}
	}
	c.mu.Unlock()
	return writeFileAtomic(c.m.fs, filepath.Join(d.path, cleanerCheckpointFile), encodeOffsetCheckpoint(out))
}

func (c *cleaner) forget(tp TopicPartition) {
	c.mu.Lock()
	delete(c.checkpoints, tp)
	delete(c.horizons, tp)
	c.mu.Unlock()
}

// run is one cleaner thread: clean the filthiest log, or wait the backoff.
func (c *cleaner) run() {
	backoff := time.Duration(max(c.m.cfg.CleanerBackoffMs, 1)) * time.Millisecond
	t := time.NewTimer(backoff)
	defer t.Stop()
	for {
		cleaned := c.cleanFilthiest()
		if cleaned {
			select {
			case <-c.m.stop:
				return
			default:
				continue
			}
		}
		t.Reset(backoff)
		select {
		case <-c.m.stop:
			return
		case <-t.C:
		}
	}
}

// cleanFilthiest picks the compacted log with the highest dirty ratio at
// or above its min.cleanable.dirty.ratio (or past max.compaction.lag.ms)
// and cleans it. It reports whether it cleaned anything.
func (c *cleaner) cleanFilthiest() bool {
	now := c.m.clock().UnixMilli()
	var best *Log
	bestRatio := -1.0
	for _, l := range c.m.Logs() {
		c.mu.Lock()
		skip := c.inProgress[l] || c.uncleanable[l]
		cp, ok := c.checkpoints[l.tp]
		purge := c.horizonPassedLocked(l.tp, now)
		c.mu.Unlock()
		if skip || l.Offline() != nil {
			continue
		}
		if !ok {
			cp = -1
		}
		l.mu.Lock()
		cfg := l.cfg
		r := l.cleanableRangeLocked(cp, now)
		closed := l.closed
		l.mu.Unlock()
		if closed || !cfg.Compact || r.dirtyBytes == 0 && !purge {
			continue
		}
		ratio := r.ratio()
		if (ratio >= cfg.MinCleanableDirtyRatio || r.needNow || purge) && ratio > bestRatio {
			best, bestRatio = l, ratio
		}
	}
	if best == nil {
		return false
	}
	c.mu.Lock()
	if c.inProgress[best] {
		c.mu.Unlock()
		return true // another thread took it; look again
	}
	c.inProgress[best] = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.inProgress, best)
		c.mu.Unlock()
	}()
	stats, err := c.clean(best)
	switch {
	case errors.Is(err, errCleanAborted) || errors.Is(err, ErrLogOffline) || errors.Is(err, ErrClosed):
		return false
	case err != nil:
		best.logger.Error("log cleaning failed; the cleaner skips this log from now on", "err", err)
		c.mu.Lock()
		c.uncleanable[best] = true
		c.mu.Unlock()
		return false
	}
	best.logger.Info("cleaned log", "first_dirty_offset", stats.FirstDirtyOffset, "end_offset", stats.EndOffset,
		"segments", stats.Segments, "bytes_read", stats.BytesRead, "bytes_written", stats.BytesWritten)
	return stats.Segments > 0
}

// cleanRange is what a log offers the cleaner.
type cleanRange struct {
	firstDirty       int64 // first offset not yet cleaned
	firstUncleanable int64 // base of the first segment the cleaner may not touch
	cleanBytes       int64 // bytes of segments wholly below firstDirty
	dirtyBytes       int64 // bytes of segments in [firstDirty, firstUncleanable)
	needNow          bool  // max.compaction.lag.ms has passed for the oldest dirty segment
}

func (c *cleaner) horizonPassedLocked(tp TopicPartition, nowMs int64) bool {
	h, ok := c.horizons[tp]
	return ok && h <= nowMs
}

func (r cleanRange) ratio() float64 {
	if r.cleanBytes+r.dirtyBytes == 0 {
		return 0
	}
	return float64(r.dirtyBytes) / float64(r.cleanBytes+r.dirtyBytes)
}

// cleanableRangeLocked works out, like Kafka's LogCleanerManager, which
// part of the log may be cleaned now: never the active segment, nothing at
// or past the high watermark, and no segment holding a record newer than
// min.compaction.lag.ms. checkpoint < 0 means none.
func (l *Log) cleanableRangeLocked(checkpoint int64, nowMs int64) cleanRange {
	segs := l.segments()
	lso := l.logStartOffset.Load()
	leo := l.endPos.Load().Offset
	first := checkpoint
	if first < lso || first > leo {
		first = lso
	}
	r := cleanRange{firstDirty: first, firstUncleanable: segs[len(segs)-1].base}
	for i := 0; i+1 < len(segs); i++ {
		s, next := segs[i], segs[i+1].base
		if l.cfg.MinCompactionLagMs > 0 || l.cfg.MaxCompactionLagMs < math.MaxInt64 {
			_ = l.statsLocked(s) // on error, the stats of an empty segment
		}
		dirty := next > first
		if next > l.highWatermark ||
			dirty && l.cfg.MinCompactionLagMs > 0 && s.maxTimestamp > nowMs-l.cfg.MinCompactionLagMs {
			r.firstUncleanable = s.base
			break
		}
		if !dirty {
			r.cleanBytes += s.size.Load()
			continue
		}
		if r.dirtyBytes == 0 && s.size.Load() > 0 {
			ts := s.rollingBasedTimestamp
			if ts < 0 {
				ts = s.created.UnixMilli()
			}
			r.needNow = l.cfg.MaxCompactionLagMs < math.MaxInt64 && nowMs-ts > l.cfg.MaxCompactionLagMs
		}
		r.dirtyBytes += s.size.Load()
	}
	if r.firstUncleanable <= r.firstDirty {
		r.dirtyBytes, r.needNow = 0, false
	}
	return r
}

// noteTruncation records that the log was cut back to offset, so the
// cleaner lowers its checkpoint.
func (l *Log) noteTruncation(offset int64) {
	for {
		cur := l.truncatedTo.Load()
		if offset >= cur || l.truncatedTo.CompareAndSwap(cur, offset) {
			return
		}
	}
}

// stopCleaning makes a running pass over the log stop and waits for it.
func (l *Log) stopCleaning() {
	l.cleanAbort.Store(true)
	l.cleanMu.Lock()
	//nolint:staticcheck // empty critical section: waiting for the pass
	l.cleanMu.Unlock()
}

// Clean compacts the partition's log now, whatever its dirty ratio (the
// active segment, records at or past the high watermark and records newer
// than min.compaction.lag.ms are still left alone). It waits for a pass
// of the cleaner threads over the same log. The log must have Compact set.
func (m *Manager) Clean(topic string, partition int32) (CleanStats, error) {
	l := m.Get(topic, partition)
	if l == nil {
		return CleanStats{}, fmt.Errorf("clean %s-%d: no such partition", topic, partition)
	}
	if !l.Config().Compact {
		return CleanStats{}, fmt.Errorf("clean %s: cleanup.policy does not include compact", l.tp)
	}
	return m.cleaner.clean(l)
}

// clean runs one pass over l: build the key map over the dirty section,
// then rewrite every segment from the log start to the end of the mapped
// range, group by group.
func (c *cleaner) clean(l *Log) (CleanStats, error) {
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
	if l.cleanAbort.Load() {
		return CleanStats{}, errCleanAborted
	}
	now := c.m.clock().UnixMilli()
	c.mu.Lock()
	cp, ok := c.checkpoints[l.tp]
	purge := c.horizonPassedLocked(l.tp, now)
	c.mu.Unlock()
	if !ok {
		cp = -1
	}

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return CleanStats{}, ErrClosed
	}
	if err := l.offlineErr(); err != nil {
		l.mu.Unlock()
		return CleanStats{}, err
	}
	if t := l.truncatedTo.Swap(math.MaxInt64); t < cp {
		cp = t
	}
	cfg := l.cfg
	r := l.cleanableRangeLocked(cp, now)
	segs := l.segments()
	// The last batch of each producer keeps its header even when emptied,
	// so its sequence survives (Kafka's lastRecordsOfActiveProducers).
	lastOfProducer := map[int64]int64{}
	for pid, e := range l.producers.producers {
		if n := len(e.batches); n > 0 {
			lastOfProducer[pid] = e.batches[n-1].lastOffset
		}
	}
	l.mu.Unlock()

	stats := CleanStats{FirstDirtyOffset: r.firstDirty, EndOffset: r.firstDirty}
	if r.firstUncleanable <= r.firstDirty && !purge {
		return stats, nil
	}
	p := &cleanPass{c: c, l: l, cfg: cfg, now: now, lastOfProducer: lastOfProducer, stats: &stats,
		keys: make(map[[2]uint64]int64), minHorizon: math.MaxInt64}
	end := r.firstDirty
	if r.firstUncleanable > r.firstDirty {
		var err error
		if end, err = p.buildOffsetMap(segs, r.firstDirty, r.firstUncleanable); err != nil {
			return stats, err
		}
	}
	if end <= r.firstDirty && !purge {
		return stats, nil
	}
	var todo []*segment
	for _, s := range segs {
		if s.base < end {
			todo = append(todo, s)
		}
	}
	for _, group := range groupSegments(todo, segs, cfg) {
		if err := p.checkAbort(); err != nil {
			return stats, err
		}
		if err := p.cleanGroup(group, end); err != nil {
			return stats, fmt.Errorf("clean %s: %w", l.tp, err)
		}
	}
	stats.EndOffset = end
	c.mu.Lock()
	c.checkpoints[l.tp] = end
	if p.minHorizon < math.MaxInt64 {
		c.horizons[l.tp] = p.minHorizon
	} else {
		delete(c.horizons, l.tp)
	}
	c.mu.Unlock()
	c.m.mu.Lock()
	d := c.m.dirOf[l.tp]
	c.m.mu.Unlock()
	if d != nil {
		if err := c.writeCheckpoint(d); err != nil {
			return stats, fmt.Errorf("clean %s: %w", l.tp, err)
		}
	}
	return stats, nil
}

// groupSegments splits the segments to clean into runs that fit one
// segment after cleaning (Kafka's groupSegmentsBySize): their total size
// within segment.bytes, their index entries within segment.index.bytes and
// their offsets within an int32 of the first base.
func groupSegments(todo, all []*segment, cfg Config) [][]*segment {
	nextBase := func(s *segment) int64 {
		i := slices.Index(all, s)
		return all[i+1].base // todo never holds the active segment
	}
	maxIdx := int(cfg.MaxIndexSize) / offsetEntrySize
	maxTime := int(cfg.MaxIndexSize) / timeEntrySize
	var groups [][]*segment
	for len(todo) > 0 {
		g := todo[:1]
		size := todo[0].size.Load()
		// Merging can add an index entry at each seam, hence the +1s.
		idx, tidx := todo[0].index.len()+1, todo[0].timeIndex.len()+1
		for len(g) < len(todo) {
			s := todo[len(g)]
			if size+s.size.Load() > cfg.SegmentBytes || idx+s.index.len()+1 > maxIdx || tidx+s.timeIndex.len()+1 > maxTime ||
				nextBase(s)-1-g[0].base > math.MaxInt32 {
				break
			}
			size += s.size.Load()
			idx += s.index.len() + 1
			tidx += s.timeIndex.len() + 1
			g = todo[:len(g)+1]
		}
		groups = append(groups, g)
		todo = todo[len(g):]
	}
	return groups
}

// cleanPass is the state of one pass over one log. Not safe for
// concurrent use.
type cleanPass struct {
	c              *cleaner
	l              *Log
	cfg            Config
	now            int64
	lastOfProducer map[int64]int64
	keys           map[[2]uint64]int64 // key hash -> offset of its latest record
	stats          *CleanStats
	readBuf        []byte
	minHorizon     int64 // earliest delete horizon of the tombstones kept
}

func (p *cleanPass) keyHash(key []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(p.c.seeds[0], key), maphash.Bytes(p.c.seeds[1], key)}
}

func (p *cleanPass) checkAbort() error {
	if p.l.cleanAbort.Load() {
		return errCleanAborted
	}
	select {
	case <-p.c.m.stop:
		return errCleanAborted
	default:
		return nil
	}
}

// forEachBatch calls fn for every batch of s (reading in large chunks).
// A read failure of a segment that left the log meanwhile is an abort.
func (p *cleanPass) forEachBatch(s *segment, fn func(h *record.Header, batch []byte) error) error {
	size := s.size.Load()
	if p.readBuf == nil {
		p.readBuf = make([]byte, cleanerReadChunk)
	}
	var start int64 // file position of p.readBuf[0]
	n := 0          // valid bytes in p.readBuf
	for pos := int64(0); pos < size; {
		off := int(pos - start)
		if off+record.HeaderSize > n || off+int(batchLen(p.readBuf[off:n])) > n {
			// Refill from pos, growing the buffer for a batch larger than it.
			start, off = pos, 0
			want := min(int64(len(p.readBuf)), size-pos)
			if want < record.HeaderSize {
				return fmt.Errorf("%s: header at %d crosses end %d: %w", s.log.Name(), pos, size, ErrCorrupt)
			}
			m, err := s.log.ReadAt(p.readBuf[:want], pos)
			if err != nil && m < int(want) {
				if s.deleted.Load() {
					return errCleanAborted
				}
				return fmt.Errorf("read %s at %d: %w", s.log.Name(), pos, err)
			}
			n = m
			if bl := batchLen(p.readBuf[:n]); bl > int64(n) {
				if bl > size-pos || bl < record.HeaderSize {
					return fmt.Errorf("%s: batch at %d of %d bytes crosses end %d: %w", s.log.Name(), pos, bl, size, ErrCorrupt)
				}
				p.readBuf = make([]byte, bl)
				n = 0
				continue
			}
		}
		h, err := record.ParseHeader(p.readBuf[off:n])
		if err != nil {
			return fmt.Errorf("%s at %d: %w", s.log.Name(), pos, err)
		}
		if h.BatchLength < minBatchLength {
			return fmt.Errorf("%s: batch at %d has length %d: %w", s.log.Name(), pos, h.BatchLength, ErrCorrupt)
		}
		batch := p.readBuf[off : off+int(h.Size())]
		if err := fn(&h, batch); err != nil {
			return err
		}
		pos += h.Size()
	}
	return nil
}

// batchLen is the whole size of the batch at the start of b (0 if b holds
// no whole header).
func batchLen(b []byte) int64 {
	if len(b) < record.HeaderSize {
		return math.MaxInt32
	}
	return int64(int32(binary.BigEndian.Uint32(b[record.OffsetBatchLength:]))) + record.LogOverhead
}

// buildOffsetMap records the latest offset of every key in [from, to)
// and returns where the map ends: to, or the base of the first batch that
// did not fit in the map.
func (p *cleanPass) buildOffsetMap(segs []*segment, from, to int64) (int64, error) {
	end := to
	full := errors.New("offset map full")
	for i, s := range segs {
		if s.base >= to {
			break
		}
		if i+1 < len(segs) && segs[i+1].base <= from {
			continue
		}
		if err := p.checkAbort(); err != nil {
			return 0, err
		}
		err := p.forEachBatch(s, func(h *record.Header, batch []byte) error {
			if h.LastOffset() < from || h.IsControl() {
				return nil
			}
			if h.BaseOffset >= to {
				return full
			}
			if len(p.keys) > 0 && len(p.keys)+int(h.RecordCount) > p.c.maxEntries {
				end = max(h.BaseOffset, from)
				return full
			}
			recs, err := record.Records(batch, 0)
			if err != nil {
				return fmt.Errorf("%s: batch at offset %d: %w", s.log.Name(), h.BaseOffset, err)
			}
			for i := range recs {
				off := h.BaseOffset + int64(recs[i].OffsetDelta)
				if recs[i].Key == nil || off < from || off >= to {
					continue
				}
				p.keys[p.keyHash(recs[i].Key)] = off
			}
			return nil
		})
		if errors.Is(err, full) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	return end, nil
}

// cleanGroup rewrites a run of segments into one, keeping per key only
// the record at the offset the map holds (or later ones, past the mapped
// range), then swaps it in.
func (p *cleanPass) cleanGroup(group []*segment, mapEnd int64) error {
	l, fs := p.l, p.l.fs
	base := group[0].base
	name := func(suffix, state string) string { return filepath.Join(l.dir, filenamePrefix(base)+suffix+state) }
	suffixes := []string{logSuffix, indexSuffix, timeIndexSuffix}
	removeAll := func(state string) {
		for _, suf := range suffixes {
			_ = fs.Remove(name(suf, state))
		}
	}
	var files []File
	for _, suf := range suffixes {
		f, err := fs.OpenFile(name(suf, cleanedSuffix), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
		if err != nil {
			closeFiles(files)
			removeAll(cleanedSuffix)
			return fmt.Errorf("create %s: %w", name(suf, cleanedSuffix), err)
		}
		files = append(files, f)
	}
	ns := &segment{base: base, dir: l.dir, log: files[0],
		index:      newOffsetIndex(fs, l.caches.indexes, name(indexSuffix, cleanedSuffix), int(p.cfg.MaxIndexSize)/offsetEntrySize),
		timeIndex:  newTimeIndex(fs, l.caches.indexes, name(timeIndexSuffix, cleanedSuffix), int(p.cfg.MaxIndexSize)/timeEntrySize),
		nextOffset: base, maxTimestamp: -1, offsetOfMaxTimestamp: base, rollingBasedTimestamp: -1}
	err := p.writeGroup(group, ns, mapEnd)
	if err == nil {
		err = errors.Join(ns.timeIndex.maybeAppend(ns.maxTimestamp, ns.relOffset(ns.offsetOfMaxTimestamp), true),
			ns.seal())
	}
	if err == nil {
		err = ns.sync()
	}
	closeFiles(files)
	if err != nil {
		removeAll(cleanedSuffix)
		return err
	}
	// .cleaned -> .swap: the log file last, its .swap is the commit point.
	for _, suf := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
		if err := fs.Rename(name(suf, cleanedSuffix), name(suf, swapSuffix)); err != nil {
			removeAll(cleanedSuffix)
			removeAll(swapSuffix)
			return fmt.Errorf("rename %s: %w", name(suf, cleanedSuffix), err)
		}
	}
	if err := fs.SyncDir(l.dir); err != nil {
		removeAll(swapSuffix)
		return fmt.Errorf("fsync dir %s: %w", l.dir, err)
	}
	if p.c.crashAt != nil && p.c.crashAt("swap-created") {
		return errCleanAborted
	}
	return p.swap(group, name, removeAll)
}

func closeFiles(files []File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// writeGroup writes the retained batches of group into ns.
func (p *cleanPass) writeGroup(group []*segment, ns *segment, mapEnd int64) error {
	var out []byte
	var written int64
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		if _, err := ns.log.WriteAt(out, written); err != nil {
			return fmt.Errorf("write %s: %w", ns.log.Name(), err)
		}
		written += int64(len(out))
		out = out[:0]
		return nil
	}
	for _, s := range group {
		if err := p.checkAbort(); err != nil {
			return err
		}
		p.stats.Segments++
		p.stats.BytesRead += s.size.Load()
		err := p.forEachBatch(s, func(h *record.Header, batch []byte) error {
			start := len(out)
			var err error
			out, err = p.filterBatch(out, h, batch, mapEnd)
			if err != nil {
				return fmt.Errorf("%s: batch at offset %d: %w", s.log.Name(), h.BaseOffset, err)
			}
			if len(out) == start {
				return nil
			}
			nh, _ := record.ParseHeader(out[start:])
			if err := ns.indexBatchLocked(p.cfg, nh, written+int64(start), nh.Size()); err != nil {
				return err
			}
			if len(out) >= cleanerReadChunk {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	ns.size.Store(written)
	p.stats.BytesWritten += written
	return nil
}

// filterBatch appends to dst what is left of batch after cleaning.
func (p *cleanPass) filterBatch(dst []byte, h *record.Header, batch []byte, mapEnd int64) ([]byte, error) {
	if h.IsControl() {
		return append(dst, batch...), nil
	}
	recs, err := record.Records(batch, 0)
	if err != nil {
		return nil, err
	}
	p.stats.RecordsRead += int64(len(recs))
	hasHorizon := h.Attributes&record.AttrDeleteHorizon != 0
	kept := recs[:0:0]
	needHorizon := false
	for _, r := range recs {
		off := h.BaseOffset + int64(r.OffsetDelta)
		if r.Key == nil {
			continue // a compacted log cannot keep records without a key (Kafka drops them too)
		}
		if latest, ok := p.keys[p.keyHash(r.Key)]; ok && off < latest && off < mapEnd {
			continue
		}
		if r.Value == nil {
			if hasHorizon && h.FirstTimestamp <= p.now {
				p.stats.TombstonesPurged++
				continue
			}
			needHorizon = needHorizon || !hasHorizon
		}
		kept = append(kept, r)
	}
	p.stats.RecordsRetained += int64(len(kept))
	for _, r := range kept {
		if r.Value == nil {
			if hasHorizon {
				p.minHorizon = min(p.minHorizon, h.FirstTimestamp)
			} else {
				p.minHorizon = min(p.minHorizon, p.now+p.cfg.DeleteRetentionMs)
			}
			break
		}
	}
	switch {
	case len(kept) == len(recs) && !needHorizon:
		return append(dst, batch...), nil
	case len(kept) == 0:
		if h.ProducerID >= 0 && p.lastOfProducer[h.ProducerID] == h.LastOffset() {
			return appendEmptyBatch(dst, h), nil
		}
		return dst, nil
	}
	first := h.FirstTimestamp
	attrs := h.Attributes
	if needHorizon {
		// KIP-534: the batch's first timestamp becomes the time after which
		// its tombstones may go; record timestamps keep their values.
		first = p.now + p.cfg.DeleteRetentionMs
		attrs |= record.AttrDeleteHorizon
		for i := range kept {
			kept[i].TimestampDelta += h.FirstTimestamp - first
		}
	}
	nb := record.BuildBatch(record.BuildOptions{
		BaseOffset: h.BaseOffset, PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Compression: h.Compression(), FirstTimestamp: first, KeepOffsetDeltas: true,
	}, kept)
	be := binary.BigEndian
	be.PutUint16(nb[record.OffsetAttributes:], uint16(attrs))
	// Keep the original last offset so the producer's last sequence stays.
	be.PutUint32(nb[record.OffsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	if h.Attributes&record.AttrTimestampLogAppend != 0 {
		be.PutUint64(nb[record.OffsetMaxTimestamp:], uint64(h.MaxTimestamp))
	}
	be.PutUint64(nb[record.OffsetProducerID:], uint64(h.ProducerID))
	be.PutUint16(nb[record.OffsetProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(nb[record.OffsetBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(nb[record.OffsetCRC:], record.ComputeCRC(nb))
	return append(dst, nb...), nil
}

// appendEmptyBatch appends a batch with h's offsets and producer fields and
// no records, as Kafka keeps for a producer's last batch.
func appendEmptyBatch(dst []byte, h *record.Header) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, record.HeaderSize)...)
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[record.OffsetBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[record.OffsetBatchLength:], uint32(record.HeaderSize-record.LogOverhead))
	be.PutUint32(b[record.OffsetPartitionLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[record.OffsetMagic] = record.MagicV2
	attrs := uint16(h.Attributes) &^ (record.AttrCompressionMask | record.AttrDeleteHorizon)
	be.PutUint16(b[record.OffsetAttributes:], attrs)
	be.PutUint32(b[record.OffsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[record.OffsetFirstTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(b[record.OffsetMaxTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(b[record.OffsetProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[record.OffsetProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[record.OffsetBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[record.OffsetRecordCount:], 0)
	be.PutUint32(b[record.OffsetCRC:], record.ComputeCRC(b))
	return dst
}

// swap replaces the group's segments by the cleaned one under the log's
// lock: old files -> .deleted, the .log.swap -> .log, then the index swaps.
// If the log changed under the pass (retention, truncation, close), the
// swap files are removed and the pass aborts. A failed rename of live
// files takes the log offline.
func (p *cleanPass) swap(group []*segment, name func(suffix, state string) string, removeAll func(string)) error {
	l, fs := p.l, p.l.fs
	crash := func(step string) bool { return p.c.crashAt != nil && p.c.crashAt(step) }
	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.segments()
	i := slices.Index(segs, group[0])
	if l.closed || l.offlineErr() != nil || l.cleanAbort.Load() || i < 0 || i+len(group) >= len(segs) ||
		!slices.Equal(segs[i:i+len(group)], group) {
		removeAll(swapSuffix)
		return errCleanAborted
	}
	for _, s := range group {
		s.deleted.Store(true)
		if err := s.renameFiles(fs, deletedSuffix); err != nil {
			return l.goOffline(fmt.Errorf("%w (for deletion)", err))
		}
	}
	if crash("old-renamed") {
		return errCleanAborted
	}
	if err := fs.Rename(name(logSuffix, swapSuffix), name(logSuffix, "")); err != nil {
		return l.goOffline(fmt.Errorf("rename %s: %w", name(logSuffix, swapSuffix), err))
	}
	if crash("log-renamed") {
		return errCleanAborted
	}
	for _, suf := range []string{indexSuffix, timeIndexSuffix} {
		if err := fs.Rename(name(suf, swapSuffix), name(suf, "")); err != nil {
			return l.goOffline(fmt.Errorf("rename %s: %w", name(suf, swapSuffix), err))
		}
	}
	if err := fs.SyncDir(l.dir); err != nil {
		return l.goOffline(fmt.Errorf("fsync dir %s: %w", l.dir, err))
	}
	ns, err := openSegment(fs, l.caches, l.dir, group[0].base, l.cfg, false, false, l.clock())
	if err != nil {
		return l.goOffline(err)
	}
	if err := ns.loadTrusted(l.cfg, false); err != nil {
		if err := errors.Join(ns.rebuildIndexes(l.cfg), ns.seal()); err != nil {
			ns.close()
			return l.goOffline(err)
		}
	}
	next := slices.Concat(segs[:i], []*segment{ns}, segs[i+len(group):])
	l.segs.Store(&next)
	for _, s := range group {
		l.scheduleDelete(s)
	}
	return nil
}

// completeSwaps runs at open, before the segments are listed, and finishes
// or undoes a cleaner swap cut short by a crash: .cleaned files are
// removed (the old segments are intact); a .log.swap is complete, so every
// old segment whose base lies in its offset range is removed and the swap
// files take their final names; index .swap files without their .log.swap
// are removed (the index is rebuilt).
func (l *Log) completeSwaps() error {
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("read partition dir %s: %w", l.dir, err)
	}
	var swaps []int64
	logSwap := map[int64]bool{}
	var liveBases []int64
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, cleanedSuffix):
			if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove leftover %s: %w", name, err)
			}
		case strings.HasSuffix(name, logSuffix+swapSuffix):
			if b, ok := parseOffsetName(strings.TrimSuffix(name, swapSuffix), logSuffix); ok {
				swaps = append(swaps, b)
				logSwap[b] = true
			}
		case strings.HasSuffix(name, logSuffix):
			if b, ok := parseOffsetName(name, logSuffix); ok {
				liveBases = append(liveBases, b)
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		for _, suf := range []string{indexSuffix, timeIndexSuffix} {
			if b, ok := parseOffsetName(strings.TrimSuffix(name, swapSuffix), suf); ok && strings.HasSuffix(name, swapSuffix) && !logSwap[b] {
				_ = l.fs.Remove(filepath.Join(l.dir, name))
			}
		}
	}
	if len(swaps) == 0 {
		return nil
	}
	slices.Sort(swaps)
	path := func(base int64, suffix string) string { return filepath.Join(l.dir, filenamePrefix(base)+suffix) }
	for _, b := range swaps {
		next, err := swapNextOffset(l.fs, path(b, logSuffix+swapSuffix), b)
		if err != nil {
			return err
		}
		l.logger.Warn("completing an interrupted log cleaner swap", "segment", path(b, logSuffix+swapSuffix), "next_offset", next)
		for _, old := range liveBases {
			if old < b || old >= next {
				continue
			}
			for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
				if err := l.fs.Remove(path(old, suf)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("remove %s replaced by a cleaned segment: %w", path(old, suf), err)
				}
			}
		}
		for _, suf := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
			if err := l.fs.Rename(path(b, suf+swapSuffix), path(b, suf)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("rename %s: %w", path(b, suf+swapSuffix), err)
			}
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("fsync dir %s: %w", l.dir, err)
	}
	return nil
}

// swapNextOffset returns the offset after the last batch of a swap file
// (base+1 when it holds none), reading headers only.
func swapNextOffset(fs FS, name string, base int64) (int64, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", name, err)
	}
	s := &segment{base: base, log: f}
	next := base + 1
	buf := make([]byte, batchPrefix)
	for pos := int64(0); pos < fi.Size(); {
		b, err := s.readBounds(pos, fi.Size(), buf)
		if err != nil {
			break // a torn tail: recovery of the segment truncates it
		}
		next = b.lastOffset + 1
		pos += b.size
	}
	return next, nil
}
