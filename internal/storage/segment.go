package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	snapshotSuffix  = ".snapshot"
	deletedSuffix   = ".deleted"
	// batchPrefix is the part of a batch header read to find batch bounds.
	batchPrefix = record.HeaderSize
	// minBatchLength is the smallest sane BatchLength (a header, no records).
	minBatchLength = record.HeaderSize - record.LogOverhead
)

// filenamePrefix is Kafka's 20-digit, zero-padded offset file name.
func filenamePrefix(offset int64) string { return fmt.Sprintf("%020d", offset) }

func parseOffsetName(name, suffix string) (int64, bool) {
	if !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	s := strings.TrimSuffix(name, suffix)
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// segment is one .log file with its two indexes. base is immutable; the
// files are opened on demand (segFile, diskIndex), so an inactive segment
// holds no descriptor and no index entry until it is read; size is
// published atomically after each append so readers never see a partial
// batch; the other mutable fields are guarded by the owning Log's mu.
type segment struct {
	base      int64
	dir       string
	log       File // a *segFile, except for the cleaner's segments in the making
	index     *offsetIndex
	timeIndex *timeIndex

	size    atomic.Int64 // bytes of whole batches in the .log
	deleted atomic.Bool  // set when the segment left the log (files may still be open)

	// Guarded by Log.mu.
	nextOffset               int64 // last offset + 1 (base when empty)
	maxTimestamp             int64 // largest batch MaxTimestamp, -1 if none
	offsetOfMaxTimestamp     int64
	rollingBasedTimestamp    int64 // first batch's MaxTimestamp, -1 if none (segment.ms)
	created                  time.Time
	jitterMs                 int64 // segment.jitter.ms draw for this segment
	indexMissing             bool  // an index file did not exist at open: rebuild
	bytesSinceLastIndexEntry int64
	indexInterval            int64      // index.interval.bytes at open, for repair
	repairMu                 sync.Mutex // serialises repair
	// statsPending: nextOffset, maxTimestamp, offsetOfMaxTimestamp and
	// rollingBasedTimestamp are not loaded yet (an inactive segment after a
	// clean shutdown); Log.statsLocked loads them on first need.
	statsPending bool
}

func (s *segment) path(suffix string) string {
	return filepath.Join(s.dir, filenamePrefix(s.base)+suffix)
}

// openSegment opens (create=true: creates) a segment. Only the .log of an
// active segment is opened now (and pinned open); the files of an inactive
// one are only stat'ed. Missing index files are created empty and noted
// in indexMissing.
func openSegment(fs FS, caches *segmentCaches, dir string, base int64, cfg Config, create, active bool, now time.Time) (*segment, error) {
	s := &segment{base: base, dir: dir, nextOffset: base, maxTimestamp: -1, offsetOfMaxTimestamp: base,
		rollingBasedTimestamp: -1, created: now}
	s.index = newOffsetIndex(fs, caches.indexes, s.path(indexSuffix), int(cfg.MaxIndexSize)/offsetEntrySize)
	s.timeIndex = newTimeIndex(fs, caches.indexes, s.path(timeIndexSuffix), int(cfg.MaxIndexSize)/timeEntrySize)
	s.indexInterval = int64(cfg.IndexIntervalBytes)
	s.index.repair, s.timeIndex.repair = s.repair, s.repair
	if create {
		f, err := fs.OpenFile(s.path(logSuffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open segment %s: %w", s.path(logSuffix), err)
		}
		h := newSegFile(fs, caches.files, s.path(logSuffix), f)
		s.log = h
		if err := errors.Join(s.index.reset(), s.timeIndex.reset()); err != nil {
			h.Close()
			return nil, err
		}
		if active {
			if err := h.pin(); err != nil {
				h.Close()
				return nil, err
			}
		}
		return s, nil
	}
	fi, err := fs.Stat(s.path(logSuffix))
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", s.path(logSuffix), err)
	}
	s.size.Store(fi.Size())
	h := newSegFile(fs, caches.files, s.path(logSuffix), nil)
	s.log = h
	// Indexes are rebuildable: create them whenever missing or insane.
	check := func(path string, setFileSize func(int64) error, reset func() error) error {
		fi, err := fs.Stat(path)
		if err == nil {
			err = setFileSize(fi.Size())
		}
		if err == nil {
			return nil
		}
		s.indexMissing = true
		return reset()
	}
	if err := check(s.path(indexSuffix), s.index.setFileSize, s.index.reset); err != nil {
		return nil, err
	}
	if err := check(s.path(timeIndexSuffix), s.timeIndex.setFileSize, s.timeIndex.reset); err != nil {
		return nil, err
	}
	if active {
		if err := h.pin(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *segment) close() error {
	s.index.drop()
	s.timeIndex.drop()
	return s.log.Close()
}

func (s *segment) sync() error {
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.log.Name(), err)
	}
	return errors.Join(s.index.sync(), s.timeIndex.sync())
}

// seal writes both indexes out whole (the segment is rolled or closed).
func (s *segment) seal() error {
	return errors.Join(s.index.seal(), s.timeIndex.seal())
}

// appendAt writes an appended batch at pos, the end of the segment.
func (s *segment) appendAt(b []byte, pos int64) (int, error) {
	if h, ok := s.log.(*segFile); ok {
		return h.Append(b, pos)
	}
	return s.log.WriteAt(b, pos)
}

// renameFiles renames the three files to their name plus suffix (for
// deletion); later opens use the new names.
func (s *segment) renameFiles(fs FS, suffix string) error {
	if h, ok := s.log.(*segFile); ok {
		if err := h.rename(s.path(logSuffix) + suffix); err != nil {
			return fmt.Errorf("rename %s: %w", s.path(logSuffix), err)
		}
	} else if err := fs.Rename(s.path(logSuffix), s.path(logSuffix)+suffix); err != nil {
		return fmt.Errorf("rename %s: %w", s.path(logSuffix), err)
	}
	if err := s.index.rename(s.path(indexSuffix) + suffix); err != nil {
		return fmt.Errorf("rename %s: %w", s.path(indexSuffix), err)
	}
	if err := s.timeIndex.rename(s.path(timeIndexSuffix) + suffix); err != nil {
		return fmt.Errorf("rename %s: %w", s.path(timeIndexSuffix), err)
	}
	return nil
}

// activate pins the .log open (the segment became the active one).
func (s *segment) activate() error {
	if h, ok := s.log.(*segFile); ok {
		return h.pin()
	}
	return nil
}

// deactivate hands the .log to the file cache (the segment was rolled).
func (s *segment) deactivate() {
	if h, ok := s.log.(*segFile); ok {
		h.unpin()
	}
}

// relOffset converts an absolute offset to the index's relative form,
// clamping to the int32 range (callers roll before it can overflow).
func (s *segment) relOffset(off int64) int32 {
	d := off - s.base
	if d < 0 {
		return -1
	}
	if d > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(d)
}

// batchBounds is what a header scan learns about one batch.
type batchBounds struct {
	pos          int64
	size         int64
	baseOffset   int64
	lastOffset   int64
	maxTimestamp int64
	epoch        int32
}

// readBounds reads the header of the batch at pos (within limit) without
// reading its records. It checks only that the header is whole and that the
// batch length is sane and fits below limit.
func (s *segment) readBounds(pos, limit int64, buf []byte) (batchBounds, error) {
	if limit-pos < batchPrefix {
		return batchBounds{}, fmt.Errorf("%s: header at %d crosses end %d: %w", s.log.Name(), pos, limit, io.ErrUnexpectedEOF)
	}
	if _, err := s.log.ReadAt(buf[:batchPrefix], pos); err != nil {
		return batchBounds{}, fmt.Errorf("read %s at %d: %w", s.log.Name(), pos, err)
	}
	b := buf[:batchPrefix]
	length := int64(int32(binary.BigEndian.Uint32(b[record.OffsetBatchLength:])))
	if length < minBatchLength {
		return batchBounds{}, fmt.Errorf("%s: batch at %d has length %d: %w", s.log.Name(), pos, length, ErrCorrupt)
	}
	size := length + record.LogOverhead
	if pos+size > limit {
		return batchBounds{}, fmt.Errorf("%s: batch at %d of %d bytes crosses end %d: %w", s.log.Name(), pos, size, limit, io.ErrUnexpectedEOF)
	}
	base := int64(binary.BigEndian.Uint64(b[record.OffsetBaseOffset:]))
	delta := int64(int32(binary.BigEndian.Uint32(b[record.OffsetLastOffsetDelta:])))
	return batchBounds{
		pos:          pos,
		size:         size,
		baseOffset:   base,
		lastOffset:   base + delta,
		maxTimestamp: int64(binary.BigEndian.Uint64(b[record.OffsetMaxTimestamp:])),
		epoch:        int32(binary.BigEndian.Uint32(b[record.OffsetPartitionLeaderEpoch:])),
	}, nil
}

// findBatch returns the first batch at or after the index position for
// offset whose last offset is >= offset, scanning headers up to limit.
// found is false when no such batch lies below limit.
func (s *segment) findBatch(offset, limit int64, buf []byte) (batchBounds, bool, error) {
	pos := int64(0)
	if rel := offset - s.base; rel > 0 {
		if rel > math.MaxInt32 {
			rel = math.MaxInt32
		}
		pos = s.index.lookup(int32(rel))
	}
	for pos < limit {
		b, err := s.readBounds(pos, limit, buf)
		if err != nil {
			return batchBounds{}, false, err
		}
		if b.lastOffset >= offset {
			return b, true, nil
		}
		pos += b.size
	}
	return batchBounds{}, false, nil
}

// offsetOfMaxTimestampRecord finds the first batch, from the index entry
// at or before offsetOfMaxTimestamp, whose MaxTimestamp is the segment's,
// and returns the offset of its first record with that timestamp (the
// batch's first record for a LogAppendTime batch, whose records all carry
// MaxTimestamp), the timestamp, and the batch's partition leader epoch (-1
// if unset). Called with Log.mu held.
func (s *segment) offsetOfMaxTimestampRecord() (int64, int64, int32, error) {
	size := s.size.Load()
	buf := make([]byte, batchPrefix)
	b, found, err := s.findBatch(s.offsetOfMaxTimestamp, size, buf)
	if err != nil {
		return -1, -1, -1, err
	}
	// findBatch stops at the batch holding offsetOfMaxTimestamp; batches
	// between the index entry and it cannot hold a larger timestamp.
	if !found || b.maxTimestamp != s.maxTimestamp {
		return -1, -1, -1, fmt.Errorf("%s: no batch at offset %d has the segment's max timestamp %d: %w",
			s.log.Name(), s.offsetOfMaxTimestamp, s.maxTimestamp, ErrCorrupt)
	}
	epoch := max(b.epoch, -1)
	batch := make([]byte, b.size)
	if _, err := s.log.ReadAt(batch, b.pos); err != nil {
		return -1, -1, -1, fmt.Errorf("read %s at %d: %w", s.log.Name(), b.pos, err)
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return -1, -1, -1, fmt.Errorf("%s: batch at %d: %w", s.log.Name(), b.pos, err)
	}
	if h.Attributes&record.AttrTimestampLogAppend != 0 {
		return b.baseOffset, b.maxTimestamp, epoch, nil
	}
	recs, err := record.Records(batch, 0)
	if err != nil {
		return -1, -1, -1, fmt.Errorf("%s: batch at %d: %w", s.log.Name(), b.pos, err)
	}
	for _, r := range recs {
		if h.FirstTimestamp+r.TimestampDelta == b.maxTimestamp {
			return b.baseOffset + int64(r.OffsetDelta), b.maxTimestamp, epoch, nil
		}
	}
	// A header whose MaxTimestamp no record holds (not written by a v2
	// producer): Kafka finds no record and answers none.
	return -1, -1, -1, nil
}

// recover validates every batch of the segment (header sanity, magic 2,
// CRC-32C, increasing offsets), truncates the file at the first bad one and
// rebuilds both indexes. It returns the bytes truncated and the batches seen
// (the callback gets each valid header, for producer and epoch state).
// A read error of the file itself is returned; a bad batch is not an error.
func (s *segment) recover(cfg Config, prevNext int64, visit func(record.Header, int64)) (truncated int64, err error) {
	if err := errors.Join(s.index.reset(), s.timeIndex.reset()); err != nil {
		return 0, err
	}
	s.statsPending, s.indexMissing = false, false
	s.nextOffset = max(s.base, prevNext)
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBasedTimestamp = -1, s.base, -1
	s.bytesSinceLastIndexEntry = 0
	fi, err := s.log.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", s.log.Name(), err)
	}
	fileSize := fi.Size()
	var buf []byte
	pos := int64(0)
	for pos < fileSize {
		h, size, ok, err := s.validBatchAt(pos, fileSize, &buf, s.nextOffset)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if err := s.indexBatchLocked(cfg, h, pos, size); err != nil {
			return 0, err
		}
		if visit != nil {
			visit(h, pos)
		}
		pos += size
	}
	if pos < fileSize {
		if err := s.log.Truncate(pos); err != nil {
			return 0, fmt.Errorf("truncate %s to %d: %w", s.log.Name(), pos, err)
		}
	}
	s.size.Store(pos)
	return fileSize - pos, nil
}

// validBatchAt reads and fully checks the batch at pos. ok=false means the
// bytes there are not a valid batch (a torn or corrupt tail).
func (s *segment) validBatchAt(pos, fileSize int64, bufp *[]byte, minBase int64) (record.Header, int64, bool, error) {
	if fileSize-pos < record.HeaderSize {
		return record.Header{}, 0, false, nil
	}
	var hb [record.HeaderSize]byte
	if _, err := s.log.ReadAt(hb[:], pos); err != nil {
		return record.Header{}, 0, false, fmt.Errorf("read %s at %d: %w", s.log.Name(), pos, err)
	}
	h, err := record.ParseHeader(hb[:])
	if err != nil {
		return record.Header{}, 0, false, nil
	}
	size := h.Size()
	if h.BatchLength < minBatchLength || pos+size > fileSize || h.Magic != record.MagicV2 ||
		h.LastOffsetDelta < 0 || h.BaseOffset < minBase || h.LastOffset()-s.base > math.MaxInt32 {
		return h, 0, false, nil
	}
	if int64(cap(*bufp)) < size {
		*bufp = make([]byte, size)
	}
	b := (*bufp)[:size]
	if _, err := s.log.ReadAt(b, pos); err != nil {
		return h, 0, false, fmt.Errorf("read %s at %d: %w", s.log.Name(), pos, err)
	}
	if record.ComputeCRC(b) != h.CRC {
		return h, 0, false, nil
	}
	return h, size, true, nil
}

// indexBatchLocked updates the segment's in-memory stats and indexes for a
// batch just written (or recovered) at pos. Called with Log.mu held.
func (s *segment) indexBatchLocked(cfg Config, h record.Header, pos, size int64) error {
	last := h.LastOffset()
	if s.rollingBasedTimestamp < 0 && pos == 0 {
		s.rollingBasedTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp = h.MaxTimestamp
		s.offsetOfMaxTimestamp = last
	}
	if s.bytesSinceLastIndexEntry > int64(cfg.IndexIntervalBytes) {
		if err := s.index.append(s.relOffset(last), pos); err != nil {
			return err
		}
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.relOffset(s.offsetOfMaxTimestamp), false); err != nil {
			return err
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += size
	s.nextOffset = last + 1
	return nil
}

// loadTrusted fills the in-memory stats of a segment whose log is trusted
// (clean shutdown, or before the recovery point). It reads the last entry
// of each index and the first batch header, and scans only the batch
// headers from the last offset-index entry on. verify (after an unclean shutdown) first reads both index files
// whole and checks that they are sane. It returns an error wrapping
// ErrCorrupt when an index is not sane; the caller rebuilds.
func (s *segment) loadTrusted(cfg Config, verify bool) error {
	s.statsPending = false
	s.nextOffset = s.base
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBasedTimestamp = -1, s.base, -1
	if s.indexMissing {
		return fmt.Errorf("%s or its time index is missing: %w", s.index.name(), ErrCorrupt)
	}
	if verify {
		if err := errors.Join(s.index.check(), s.timeIndex.check()); err != nil {
			return err
		}
	}
	oe, haveOE, err := s.index.lastEntry()
	if err != nil {
		return err
	}
	te, haveTE, err := s.timeIndex.lastEntry()
	if err != nil {
		return err
	}
	size := s.size.Load()
	if haveOE && int64(oe.pos) >= size {
		return fmt.Errorf("%s: entry position %d past log end %d: %w", s.index.name(), oe.pos, size, ErrCorrupt)
	}
	buf := make([]byte, batchPrefix)
	if size == 0 {
		if haveOE || haveTE {
			return fmt.Errorf("%s: entries for an empty log: %w", s.index.name(), ErrCorrupt)
		}
		return nil
	}
	first, err := s.readBounds(0, size, buf)
	if err != nil {
		return err
	}
	s.rollingBasedTimestamp = first.maxTimestamp
	// Each offset-index entry was added together with a time-index entry
	// for the largest timestamp so far (when it grew), so the last time
	// entry covers every batch up to the last offset entry's: scan only
	// from there.
	pos := int64(0)
	if haveTE {
		s.maxTimestamp, s.offsetOfMaxTimestamp = te.ts, s.base+int64(te.rel)
	}
	if haveOE {
		pos = int64(oe.pos)
		// The last offset-index entry must point at a batch that ends at it.
		b, err := s.readBounds(int64(oe.pos), size, buf)
		if err != nil || b.lastOffset != s.base+int64(oe.rel) {
			return fmt.Errorf("%s: last entry does not match the log: %w", s.index.name(), ErrCorrupt)
		}
	}
	for pos < size {
		b, err := s.readBounds(pos, size, buf)
		if err != nil {
			return err
		}
		if b.maxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = b.maxTimestamp, b.lastOffset
		}
		s.nextOffset = b.lastOffset + 1
		pos += b.size
	}
	if haveTE && s.base+int64(te.rel) >= s.nextOffset {
		return fmt.Errorf("%s: entry offset past log end: %w", s.timeIndex.name(), ErrCorrupt)
	}
	return nil
}

// rebuildIndexes recreates both indexes from the log's batch headers
// (trusting the log, which is not re-validated).
func (s *segment) rebuildIndexes(cfg Config) error {
	if err := errors.Join(s.index.reset(), s.timeIndex.reset()); err != nil {
		return err
	}
	s.statsPending, s.indexMissing = false, false
	s.nextOffset = s.base
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBasedTimestamp = -1, s.base, -1
	s.bytesSinceLastIndexEntry = 0
	size := s.size.Load()
	buf := make([]byte, batchPrefix)
	for pos := int64(0); pos < size; {
		b, err := s.readBounds(pos, size, buf)
		if err != nil {
			return err
		}
		h := record.Header{BaseOffset: b.baseOffset, LastOffsetDelta: int32(b.lastOffset - b.baseOffset), MaxTimestamp: b.maxTimestamp}
		if err := s.indexBatchLocked(cfg, h, pos, b.size); err != nil {
			return err
		}
		pos += b.size
	}
	return nil
}

// largestTimestamp is the segment's largest batch timestamp for time
// retention; segments without timestamps use the file's modification time.
func (s *segment) largestTimestamp() int64 {
	if s.maxTimestamp >= 0 {
		return s.maxTimestamp
	}
	if fi, err := s.log.Stat(); err == nil {
		return fi.ModTime().UnixMilli()
	}
	return -1
}

// repair rebuilds both index files of an inactive segment from its batch
// headers, after a lookup found one insane (a damaged file of a segment
// that was not checked at a clean start). It changes no stats and leaves
// the active segment alone (its indexes are checked at open and rebuilt
// by recovery). It reports whether the files were rebuilt.
func (s *segment) repair() bool {
	if h, ok := s.log.(*segFile); !ok || h.isPinned() || s.deleted.Load() {
		return false
	}
	s.repairMu.Lock()
	defer s.repairMu.Unlock()
	size := s.size.Load()
	buf := make([]byte, batchPrefix)
	var oes []offsetEntry
	var tes []timeEntry
	maxTs, offMax, since := int64(-1), s.base, int64(0)
	addTime := func() {
		if maxTs < 0 || len(tes) >= s.timeIndex.maxEntries {
			return
		}
		if n := len(tes); n > 0 && (maxTs <= tes[n-1].ts || s.relOffset(offMax) < tes[n-1].rel) {
			return
		}
		tes = append(tes, timeEntry{ts: maxTs, rel: s.relOffset(offMax)})
	}
	for pos := int64(0); pos < size; {
		b, err := s.readBounds(pos, size, buf)
		if err != nil {
			return false
		}
		if b.maxTimestamp > maxTs {
			maxTs, offMax = b.maxTimestamp, b.lastOffset
		}
		if since > s.indexInterval && len(oes) < s.index.maxEntries {
			oes = append(oes, offsetEntry{rel: s.relOffset(b.lastOffset), pos: int32(pos)})
			addTime()
			since = 0
		}
		since += b.size
		pos += b.size
	}
	addTime()
	slog.Warn("rebuilt a damaged index of an inactive segment", "segment", s.path(logSuffix))
	return s.index.replace(oes) == nil && s.timeIndex.replace(tes) == nil
}
