package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

// ErrUnexpectedAppendOffset: a follower append's base offset is below the
// log end offset.
var ErrUnexpectedAppendOffset = errors.New("unexpected append offset")

// Position is Kafka's LogOffsetMetadata: an offset and where its batch
// starts on disk, so a read bounded by it needs no scan.
type Position struct {
	Offset      int64 // message offset
	SegmentBase int64 // base offset of the segment holding it
	Pos         int64 // byte position in that segment
}

// AppendOptions says how Append treats a batch.
type AppendOptions struct {
	// AssignOffsets: leader append. Patch BaseOffset to the log end offset and
	// PartitionLeaderEpoch to LeaderEpoch, and check idempotent producers.
	// False: follower append, keep the batch's offsets and epoch.
	AssignOffsets bool
	LeaderEpoch   int32
}

// AppendResult describes an appended (or duplicate) batch.
type AppendResult struct {
	BaseOffset   int64
	LastOffset   int64
	Duplicate    bool     // an idempotent retry: nothing written, original offsets
	EndPosition  Position // log end after the append
	MaxTimestamp int64
	SizeBytes    int
}

// ReadResult is a byte range of whole batches in one segment file. The
// caller sends File[Pos:Pos+Size] (sendfile or ReadAt). File is the
// segment's handle (a segFile): it may be closed by the Manager's bound on
// open files between uses and is then reopened by the next ReadAt or
// sendfile (each holds a reference, so nothing is closed under it); it
// stays usable at least FileDeleteDelayMs after its segment is deleted.
// Size 0 = nothing.
type ReadResult struct {
	File        File
	Pos         int64
	Size        int64
	FirstOffset int64 // base offset of the first batch (the requested offset when empty)
	// Active: the region lies in the active segment, written recently and
	// so almost surely in the page cache.
	Active bool
}

// logHooks lets the Manager learn about a log's events.
type logHooks struct {
	logStartChanged func(*Log) // called without the log's mu held
	offline         func(*Log)
	flushed         func(time.Duration) // ManagerConfig.OnFlush; may be nil
}

// Log is one partition replica's log: a list of segments.
//
// Safe for concurrent use. Appends and structural changes (roll, retention,
// truncation) are serialised by mu; Read runs without mu against an atomic
// snapshot of the segment list and the published end position, so it never
// waits for an append. Lock order: flushMu, then mu, then index locks.
type Log struct {
	fs        FS
	dir       string
	tp        TopicPartition
	topicID   [16]byte
	clock     func() time.Time
	logger    *slog.Logger
	hooks     logHooks
	parentDir string
	caches    *segmentCaches

	segs           atomic.Pointer[[]*segment] // sorted by base; copy on write under mu
	endPos         atomic.Pointer[Position]   // log end, published after each append
	logStartOffset atomic.Int64
	offline        atomic.Pointer[error]

	// hint is the batch the last Read that stopped before a batch stopped
	// before (read.go); truncations counts TruncateTo calls begun and
	// ended, so that a hint taken before or during one is never used after.
	hintMu      sync.Mutex
	hint        readHint
	truncations atomic.Uint64
	tail        tailRing // the newest batches' bounds (tail.go)

	flushMu sync.Mutex // serialises Flush; taken before mu

	mu             sync.Mutex
	cfg            Config
	recoveryPoint  int64
	unflushed      int64 // messages appended since the last flush
	lastFlush      time.Time
	dirDirty       bool // files created since the last flush (fsync the dir)
	producers      *producerState
	epochs         epochCache
	snapshots      []int64 // offsets of producer snapshot files, ascending
	highWatermark  int64   // retention never deletes at or past it
	closed         bool
	asyncFlushes   sync.WaitGroup
	pendingMu      sync.Mutex // guards pendingDeletes; taken after mu if both
	pendingDeletes []*pendingDelete

	// cleanMu is held by the cleaner for a whole pass over this log (taken
	// before mu); cleanAbort asks a running pass to stop; truncatedTo is
	// the lowest offset the log was truncated to since the cleaner last
	// looked (math.MaxInt64 = none), so its checkpoint can be lowered.
	cleanMu     sync.Mutex
	cleanAbort  atomic.Bool
	truncatedTo atomic.Int64

	// txnMu guards txns (taken after mu); firstUnstable mirrors
	// txns.firstUnstable() for lock-free readers (txn.go).
	txnMu         sync.RWMutex
	txns          *txnState
	firstUnstable atomic.Int64
}

type pendingDelete struct {
	timer *time.Timer
	once  sync.Once
	run   func()
}

// logParams are what openLog needs; the Manager fills them from the
// checkpoints of the log dir.
type logParams struct {
	fs             FS
	dir            string
	tp             TopicPartition
	cfg            Config
	clock          func() time.Time
	logger         *slog.Logger
	hooks          logHooks
	recoveryPoint  int64
	logStartOffset int64
	clean          bool     // clean shutdown marker present: trust the logs
	topicID        [16]byte // zero = unknown
	create         bool
	caches         *segmentCaches // nil = a private one with the defaults
}

// openLog opens (or with create, creates) a partition dir, recovering it
// when the shutdown was not clean.
func openLog(p logParams) (*Log, error) {
	if err := p.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("log %s: %w", p.tp, err)
	}
	if p.clock == nil {
		p.clock = time.Now
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	l := &Log{
		fs: p.fs, dir: p.dir, tp: p.tp, clock: p.clock, hooks: p.hooks,
		logger:    p.logger.With("partition", p.tp.String()),
		parentDir: filepath.Dir(p.dir),
		cfg:       p.cfg, producers: newProducerState(), highWatermark: math.MaxInt64,
		txns: newTxnState(), caches: p.caches,
	}
	if l.caches == nil {
		l.caches = newSegmentCaches(0, 0)
	}
	l.truncatedTo.Store(math.MaxInt64)
	l.firstUnstable.Store(math.MaxInt64)
	if p.create {
		if err := l.fs.MkdirAll(p.dir, 0o755); err != nil {
			return nil, fmt.Errorf("create partition dir %s: %w", p.dir, err)
		}
		if err := l.fs.SyncDir(l.parentDir); err != nil {
			return nil, fmt.Errorf("fsync %s: %w", l.parentDir, err)
		}
	}
	if err := l.loadTopicID(p.topicID); err != nil {
		return nil, err
	}
	if err := l.load(p); err != nil {
		l.closeSegments()
		return nil, err
	}
	return l, nil
}

func (l *Log) loadTopicID(want [16]byte) error {
	path := filepath.Join(l.dir, partitionMetadataFile)
	id, found, err := readPartitionMetadata(l.fs, path)
	if err != nil {
		return err
	}
	var zero [16]byte
	switch {
	case found && want != zero && id != want:
		return fmt.Errorf("%s holds topic id %s, not %s: %w", path, FormatUUID(id), FormatUUID(want), ErrInconsistentTopicID)
	case found:
		l.topicID = id
	case want != zero:
		if err := writeFileAtomic(l.fs, path, encodePartitionMetadata(want)); err != nil {
			return err
		}
		l.topicID = want
	}
	return nil
}

// load reads the partition dir: segments, indexes, recovery, leader epochs
// and producer state.
func (l *Log) load(p logParams) error {
	// Finish or undo a cleaner swap interrupted by a crash (cleaner.go).
	if err := l.completeSwaps(); err != nil {
		return err
	}
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("read partition dir %s: %w", l.dir, err)
	}
	var bases, snaps []int64
	haveLog := map[int64]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		full := filepath.Join(l.dir, name)
		switch {
		case strings.HasSuffix(name, deletedSuffix), strings.HasSuffix(name, ".tmp"),
			strings.HasSuffix(name, cleanedSuffix), strings.HasSuffix(name, swapSuffix):
			if err := l.fs.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove leftover %s: %w", full, err)
			}
		case strings.HasSuffix(name, logSuffix):
			if b, ok := parseOffsetName(name, logSuffix); ok {
				bases = append(bases, b)
				haveLog[b] = true
			}
		case strings.HasSuffix(name, snapshotSuffix):
			if o, ok := parseOffsetName(name, snapshotSuffix); ok {
				snaps = append(snaps, o)
			}
		}
	}
	// Indexes without a log are orphans from an interrupted delete.
	for _, e := range entries {
		for _, suf := range []string{indexSuffix, timeIndexSuffix} {
			if b, ok := parseOffsetName(e.Name(), suf); ok && !haveLog[b] {
				_ = l.fs.Remove(filepath.Join(l.dir, e.Name()))
			}
		}
	}
	slices.Sort(bases)
	now := l.clock()
	var segs []*segment
	for i, b := range bases {
		s, err := openSegment(l.fs, l.caches, l.dir, b, l.cfg, false, i == len(bases)-1, now)
		if err != nil {
			closeAll(segs)
			return err
		}
		segs = append(segs, s)
	}
	l.segs.Store(&segs)

	if len(segs) == 0 {
		start := max(p.logStartOffset, 0)
		s, err := openSegment(l.fs, l.caches, l.dir, start, l.cfg, true, true, now)
		if err != nil {
			return err
		}
		s.rollJitter(l.cfg)
		segs = []*segment{s}
		l.segs.Store(&segs)
	} else if err := l.loadSegments(segs, p); err != nil {
		return err
	}
	segs = *l.segs.Load()
	if err := segs[len(segs)-1].activate(); err != nil { // recovery may have cut the list
		return err
	}
	for _, s := range segs[:len(segs)-1] {
		if err := s.seal(); err != nil { // recovered segments' rebuilt indexes
			return err
		}
	}
	active := segs[len(segs)-1]
	leo := active.nextOffset
	if n := len(segs); n > 1 && active.size.Load() == 0 {
		if err := l.statsLocked(segs[n-2]); err != nil {
			return err
		}
	}
	if n := len(segs); n > 1 && segs[n-2].nextOffset > leo {
		leo = segs[n-2].nextOffset // cannot happen for sane dirs; keep offsets monotonic
	}
	l.publishEndLocked(Position{Offset: leo, SegmentBase: active.base, Pos: active.size.Load()})
	lso := min(max(p.logStartOffset, segs[0].base), leo)
	l.logStartOffset.Store(lso)
	if p.clean {
		l.recoveryPoint = leo
	} else {
		l.recoveryPoint = min(p.recoveryPoint, leo)
	}
	l.lastFlush = now

	// Leader epochs: the checkpoint, then any newer epochs found during
	// recovery, truncated to the log's offsets.
	cpEpochs, err := readEpochCheckpoint(l.fs, filepath.Join(l.dir, leaderEpochCheckpointFile))
	if err != nil {
		l.logger.Warn("ignoring unreadable leader epoch checkpoint", "err", err)
	}
	recovered := l.epochs.entries
	l.epochs.entries = nil
	for _, e := range cpEpochs {
		l.epochs.assign(e.Epoch, e.StartOffset)
	}
	for _, e := range recovered {
		l.epochs.assign(e.Epoch, e.StartOffset)
	}
	l.epochs.truncateFromEnd(leo)
	l.epochs.truncateFromStart(lso)
	if !slices.Equal(cpEpochs, l.epochs.entries) {
		if err := l.writeEpochsLocked(); err != nil {
			return err
		}
	}
	return l.loadProducerStateLocked(snaps)
}

// loadSegments fills in every segment, recovering from the segment holding
// the recovery point (or trusting all with a clean shutdown).
func (l *Log) loadSegments(segs []*segment, p logParams) error {
	recoverFrom := len(segs)
	if !p.clean {
		recoverFrom = 0
		for i, s := range segs {
			if s.base <= p.recoveryPoint {
				recoverFrom = i
			}
		}
	}
	prevNext := int64(-1)
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		doRecover := i >= recoverFrom
		if !doRecover && i < len(segs)-1 && i+1 != recoverFrom && !s.indexMissing {
			// Trusted and inactive: its stats load on first need, so a
			// clean start reads no index and no batch of it.
			s.statsPending = true
			continue
		}
		if !doRecover && i < len(segs)-1 && s.indexMissing {
			s.statsPending = true
			if err := l.statsLocked(s); err != nil { // rebuilds
				return err
			}
			prevNext = s.nextOffset
			continue
		}
		if !doRecover {
			if err := s.loadTrusted(l.cfg, !p.clean); err != nil {
				l.logger.Warn("segment index or log not sane; recovering it", "segment", s.path(logSuffix), "err", err)
				doRecover = true
			}
		}
		if !doRecover {
			prevNext = s.nextOffset
			continue
		}
		truncated, err := s.recover(l.cfg, prevNext, func(h record.Header, _ int64) {
			l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
		})
		if err != nil {
			return fmt.Errorf("recover %s: %w", s.path(logSuffix), err)
		}
		prevNext = s.nextOffset
		if truncated > 0 && i < len(segs)-1 {
			l.logger.Warn("truncated torn log tail; deleting later segments", "segment", s.path(logSuffix),
				"bytes", truncated, "later_segments", len(segs)-1-i)
			rest := segs[i+1:]
			keep := append([]*segment(nil), segs[:i+1]...)
			l.segs.Store(&keep)
			for _, d := range rest {
				if err := l.removeSegmentNow(d); err != nil {
					return err
				}
			}
			segs = keep
			break
		} else if truncated > 0 {
			l.logger.Warn("truncated torn log tail", "segment", s.path(logSuffix), "bytes", truncated)
		}
	}
	// An empty segment followed by others is harmless; keep it like Kafka.
	last := segs[len(segs)-1]
	last.rollJitter(l.cfg)
	return nil
}

// statsLocked loads the stats of a segment left pending at open (see
// segment.statsPending). An index found insane is rebuilt from the log.
func (l *Log) statsLocked(s *segment) error {
	if !s.statsPending {
		return nil
	}
	err := s.loadTrusted(l.cfg, false)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrCorrupt) {
		return err
	}
	l.logger.Warn("segment index not sane; rebuilding it", "segment", s.path(logSuffix), "err", err)
	return errors.Join(s.rebuildIndexes(l.cfg), s.seal())
}

// endBoundLocked is segs[i].nextOffset, or an upper bound of it (the next
// segment's base) while its stats are pending.
func endBoundLocked(segs []*segment, i int) int64 {
	if segs[i].statsPending && i+1 < len(segs) {
		return segs[i+1].base
	}
	return segs[i].nextOffset
}

func closeAll(segs []*segment) {
	for _, s := range segs {
		s.close()
	}
}

func (l *Log) closeSegments() {
	if p := l.segs.Load(); p != nil {
		closeAll(*p)
	}
}

// removeSegmentNow closes and removes a segment's files immediately (used
// during load, when nobody can be reading).
func (l *Log) removeSegmentNow(s *segment) error {
	s.deleted.Store(true)
	s.close()
	for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if err := l.fs.Remove(s.path(suf)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", s.path(suf), err)
		}
	}
	return nil
}

func (s *segment) rollJitter(cfg Config) {
	if cfg.SegmentJitterMs > 0 {
		s.jitterMs = rand.Int64N(cfg.SegmentJitterMs)
	}
}

// loadProducerStateLocked rebuilds producer state from the newest usable
// snapshot at or below the log end plus the batch headers after it.
func (l *Log) loadProducerStateLocked(snaps []int64) error {
	leo := l.endPos.Load().Offset
	slices.Sort(snaps)
	from := (*l.segs.Load())[0].base
	l.producers = newProducerState()
	l.snapshots = nil
	var txns *txnState // nil: the snapshot holds none, replay the whole log
	for i := len(snaps) - 1; i >= 0; i-- {
		path := l.snapshotPath(snaps[i])
		if snaps[i] > leo {
			_ = l.fs.Remove(path)
			continue
		}
		data, err := readWholeFile(l.fs, path)
		var ps *producerState
		var ts *txnState
		if err == nil {
			ps, ts, err = decodeSnapshot(data)
		}
		if err != nil {
			l.logger.Warn("ignoring producer snapshot", "file", path, "err", err)
			_ = l.fs.Remove(path)
			continue
		}
		l.producers, txns = ps, ts
		from = max(from, snaps[i])
		l.snapshots = append([]int64(nil), snaps[:i+1]...)
		break
	}
	err := l.scanHeadersLocked(from, func(h *record.Header) {
		l.producers.update(h, h.BaseOffset)
	})
	if err != nil {
		return err
	}
	if txns == nil {
		return l.loadTxnStateLocked(newTxnState(), math.MinInt64)
	}
	lso := l.logStartOffset.Load()
	txns.aborted = slices.DeleteFunc(txns.aborted, func(a AbortedTxn) bool { return a.LastOffset < lso })
	return l.loadTxnStateLocked(txns, from)
}

func (l *Log) snapshotPath(off int64) string {
	return filepath.Join(l.dir, filenamePrefix(off)+snapshotSuffix)
}

// scanHeadersLocked calls fn for every batch whose last offset is >= from,
// reading only headers.
func (l *Log) scanHeadersLocked(from int64, fn func(*record.Header)) error {
	var hb [record.HeaderSize]byte
	bb := make([]byte, batchPrefix)
	segs := *l.segs.Load()
	for i, s := range segs {
		size := s.size.Load()
		if endBoundLocked(segs, i) <= from || size == 0 {
			continue
		}
		pos := int64(0)
		if from > s.base {
			pos = s.index.lookup(s.relOffset(from))
		}
		for pos < size {
			b, err := s.readBounds(pos, size, bb)
			if err != nil {
				return err
			}
			if b.lastOffset >= from {
				if _, err := s.log.ReadAt(hb[:], pos); err != nil {
					return fmt.Errorf("read %s at %d: %w", s.log.Name(), pos, err)
				}
				h, err := record.ParseHeader(hb[:])
				if err != nil {
					return fmt.Errorf("%s at %d: %w", s.log.Name(), pos, err)
				}
				fn(&h)
			}
			pos += b.size
		}
	}
	return nil
}

func (l *Log) writeEpochsLocked() error {
	return writeFileAtomic(l.fs, filepath.Join(l.dir, leaderEpochCheckpointFile), encodeEpochCheckpoint(l.epochs.entries))
}

func (l *Log) publishEndLocked(p Position) { l.endPos.Store(&p) }

// offlineErr returns the sticky error once the log went offline.
func (l *Log) offlineErr() error {
	if p := l.offline.Load(); p != nil {
		return *p
	}
	return nil
}

// goOffline records the first I/O failure; later calls keep the first.
func (l *Log) goOffline(cause error) error {
	err := fmt.Errorf("%w: %s: %w", ErrLogOffline, l.tp, cause)
	if l.offline.CompareAndSwap(nil, &err) {
		l.logger.Error("log is offline after an I/O error", "err", cause)
		if l.hooks.offline != nil {
			l.hooks.offline(l)
		}
	}
	return l.offlineErr()
}

func (l *Log) segments() []*segment { return *l.segs.Load() }

// Append writes exactly one v2 batch, already validated by the caller. As
// leader (opts.AssignOffsets) it patches the batch's base offset and leader
// epoch IN PLACE and checks idempotent producers; as follower it keeps them.
// A duplicate of one of the producer's last five batches returns the
// original offsets with Duplicate set and writes nothing. Any write or fsync
// error takes the log offline (ErrLogOffline, now and for every later call).
// When flush.messages is reached, Append fsyncs before returning.
func (l *Log) Append(batch []byte, opts AppendOptions) (AppendResult, error) {
	if err := l.offlineErr(); err != nil {
		return AppendResult{}, err
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return AppendResult{}, fmt.Errorf("append to %s: %w: %w", l.tp, ErrCorrupt, err)
	}
	if int64(len(batch)) != h.Size() || h.Magic != record.MagicV2 || h.LastOffsetDelta < 0 || h.BatchLength < minBatchLength {
		return AppendResult{}, fmt.Errorf("append to %s: batch of %d bytes with length %d, magic %d, last offset delta %d: %w",
			l.tp, len(batch), h.BatchLength, h.Magic, h.LastOffsetDelta, ErrCorrupt)
	}
	l.mu.Lock()
	res, flush, err := l.appendLocked(batch, &h, opts)
	l.mu.Unlock()
	if err != nil {
		return AppendResult{}, err
	}
	if flush {
		if err := l.Flush(); err != nil {
			return AppendResult{}, err
		}
	}
	return res, nil
}

func (l *Log) appendLocked(batch []byte, h *record.Header, opts AppendOptions) (AppendResult, bool, error) {
	if l.closed {
		return AppendResult{}, false, fmt.Errorf("append to %s: %w", l.tp, ErrClosed)
	}
	if err := l.offlineErr(); err != nil {
		return AppendResult{}, false, err
	}
	end := *l.endPos.Load()
	if opts.AssignOffsets {
		if h.ProducerID >= 0 {
			dup, err := l.producers.check(h)
			if err != nil {
				return AppendResult{}, false, fmt.Errorf("append to %s: %w", l.tp, err)
			}
			if dup != nil {
				return AppendResult{BaseOffset: dup.firstOffset, LastOffset: dup.lastOffset, Duplicate: true,
					EndPosition: end, MaxTimestamp: dup.maxTimestamp}, false, nil
			}
		}
		h.BaseOffset = end.Offset
		h.PartitionLeaderEpoch = opts.LeaderEpoch
		record.SetBaseOffset(batch, h.BaseOffset)
		record.SetPartitionLeaderEpoch(batch, h.PartitionLeaderEpoch)
	} else if h.BaseOffset < end.Offset {
		return AppendResult{}, false, fmt.Errorf("append to %s: base offset %d below log end offset %d: %w",
			l.tp, h.BaseOffset, end.Offset, ErrUnexpectedAppendOffset)
	}
	size := int64(len(batch))
	segs := l.segments()
	active := segs[len(segs)-1]
	if l.shouldRollLocked(active, h, size) {
		var err error
		if active, err = l.rollLocked(h.BaseOffset); err != nil {
			return AppendResult{}, false, l.goOffline(err)
		}
	}
	pos := active.size.Load()
	if _, err := active.appendAt(batch, pos); err != nil {
		return AppendResult{}, false, l.goOffline(fmt.Errorf("write %s at %d: %w", active.log.Name(), pos, err))
	}
	if err := active.indexBatchLocked(l.cfg, *h, pos, size); err != nil {
		return AppendResult{}, false, l.goOffline(err)
	}
	active.size.Store(pos + size)
	last := h.LastOffset()
	l.tail.add(l.segs.Load(), l.truncations.Load(), batchBounds{pos: pos, size: size, baseOffset: h.BaseOffset,
		lastOffset: last, maxTimestamp: h.MaxTimestamp, epoch: h.PartitionLeaderEpoch})
	newEnd := Position{Offset: last + 1, SegmentBase: active.base, Pos: pos + size}
	l.publishEndLocked(newEnd)
	if h.ProducerID >= 0 {
		l.producers.update(h, h.BaseOffset)
		l.updateTxnLocked(h, batch)
	}
	if l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) {
		if err := l.writeEpochsLocked(); err != nil {
			return AppendResult{}, false, l.goOffline(err)
		}
	}
	l.unflushed += int64(h.LastOffsetDelta) + 1
	return AppendResult{BaseOffset: h.BaseOffset, LastOffset: last, EndPosition: newEnd,
		MaxTimestamp: h.MaxTimestamp, SizeBytes: len(batch)}, l.unflushed >= l.cfg.FlushIntervalMessages, nil
}

// shouldRollLocked follows Kafka's LogSegment.shouldRoll.
func (l *Log) shouldRollLocked(s *segment, h *record.Header, size int64) bool {
	if h.LastOffset()-s.base > math.MaxInt32 {
		return true
	}
	if s.size.Load() == 0 {
		return false
	}
	if s.size.Load()+size > l.cfg.SegmentBytes || s.index.full() || s.timeIndex.full() {
		return true
	}
	// Like Kafka's timeWaitedForRoll: by record timestamps when the segment
	// has them (incoming max timestamp minus the first batch's), else by
	// the wall clock since the segment was created.
	waited := l.clock().UnixMilli() - s.created.UnixMilli()
	if s.rollingBasedTimestamp >= 0 {
		waited = h.MaxTimestamp - s.rollingBasedTimestamp
	}
	return waited > l.cfg.SegmentMs-s.jitterMs
}

// rollLocked closes the active segment for appends and starts a new one at
// newBase: it seals the old indexes (final time-index entry, trimmed
// files), writes a producer snapshot and flushes the old segment in the
// background, as Kafka does.
func (l *Log) rollLocked(newBase int64) (*segment, error) {
	segs := l.segments()
	old := segs[len(segs)-1]
	if old.size.Load() == 0 && old.base == newBase {
		return old, nil
	}
	if err := old.timeIndex.maybeAppend(old.maxTimestamp, old.relOffset(old.offsetOfMaxTimestamp), true); err != nil {
		return nil, err
	}
	if err := old.seal(); err != nil {
		return nil, err
	}
	s, err := openSegment(l.fs, l.caches, l.dir, newBase, l.cfg, true, true, l.clock())
	if err != nil {
		return nil, err
	}
	s.rollJitter(l.cfg)
	old.deactivate()
	next := append(slices.Clip(segs), s)
	l.segs.Store(&next)
	l.dirDirty = true
	l.publishEndLocked(Position{Offset: l.endPos.Load().Offset, SegmentBase: s.base, Pos: 0})
	l.writeSnapshotLocked(l.endPos.Load().Offset)
	l.asyncFlushes.Add(1)
	go func() {
		defer l.asyncFlushes.Done()
		if err := l.Flush(); err != nil && !errors.Is(err, ErrLogOffline) {
			l.logger.Warn("background flush after roll failed", "err", err)
		}
	}()
	return s, nil
}

// writeSnapshotLocked writes a producer snapshot named after offset (the log
// end it reflects) and drops snapshots older than the two newest. A failure
// is logged: snapshots only shorten recovery.
func (l *Log) writeSnapshotLocked(offset int64) {
	if n := len(l.snapshots); n > 0 && l.snapshots[n-1] == offset {
		return
	}
	l.txnMu.RLock()
	data := l.producers.encodeWith(l.txns)
	l.txnMu.RUnlock()
	if err := writeFileAtomic(l.fs, l.snapshotPath(offset), data); err != nil {
		l.logger.Warn("writing producer snapshot failed", "err", err)
		return
	}
	l.snapshots = append(l.snapshots, offset)
	for len(l.snapshots) > 2 {
		_ = l.fs.Remove(l.snapshotPath(l.snapshots[0]))
		l.snapshots = l.snapshots[1:]
	}
}

// Flush fsyncs every segment holding offsets at or past the recovery point
// and moves the recovery point to the log end offset seen at the start.
// Appends continue while the fsync runs. A failure takes the log offline.
func (l *Log) Flush() error {
	start := time.Now()
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	if err := l.offlineErr(); err != nil {
		l.mu.Unlock()
		return err
	}
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	target := l.endPos.Load().Offset
	rp := l.recoveryPoint
	var todo []*segment
	if target > rp || l.dirDirty {
		segs := l.segments()
		for i, s := range segs {
			if endBoundLocked(segs, i) > rp || s.size.Load() > 0 && s.base >= rp {
				todo = append(todo, s)
			}
		}
	}
	syncDir := l.dirDirty
	l.dirDirty = false
	l.unflushed = 0
	l.mu.Unlock()

	for _, s := range todo {
		if err := s.sync(); err != nil {
			if s.deleted.Load() {
				continue // deleted (and maybe closed) while we flushed
			}
			return l.goOffline(err)
		}
	}
	if syncDir {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.goOffline(fmt.Errorf("fsync dir %s: %w", l.dir, err))
		}
	}
	l.mu.Lock()
	if target > l.recoveryPoint {
		l.recoveryPoint = target
	}
	l.lastFlush = l.clock()
	l.mu.Unlock()
	if l.hooks.flushed != nil && (len(todo) > 0 || syncDir) {
		l.hooks.flushed(time.Since(start))
	}
	return nil
}

// PositionOf converts an offset in [LogStartOffset, LogEndOffset] to a
// Position (the start of the batch holding it), e.g. for a high watermark
// learned from a follower.
func (l *Log) PositionOf(offset int64) (Position, error) {
	gen := l.truncations.Load() // before the segment list, as in Read
	end := *l.endPos.Load()
	lso := l.logStartOffset.Load()
	if offset == end.Offset {
		return end, nil
	}
	if offset < lso || offset > end.Offset {
		return Position{}, fmt.Errorf("position of %s offset %d outside [%d, %d]: %w", l.tp, offset, lso, end.Offset, ErrOffsetOutOfRange)
	}
	segsp := l.segs.Load()
	segs := *segsp
	i := max(sort.Search(len(segs), func(i int) bool { return segs[i].base > offset })-1, 0)
	// A high watermark a few batches behind the log end (a follower's
	// fetch offset) is in the newest batches' bounds: no header read.
	if b, ok := l.tail.find(segsp, gen, i, offset); ok {
		return Position{Offset: offset, SegmentBase: segs[i].base, Pos: b.pos}, nil
	}
	bp := headerBufs.Get().(*[batchPrefix]byte)
	defer headerBufs.Put(bp)
	buf := bp[:]
	for ; i < len(segs); i++ {
		s := segs[i]
		b, found, err := s.findBatch(offset, s.size.Load(), buf)
		if err != nil {
			return Position{}, err
		}
		if found {
			return Position{Offset: offset, SegmentBase: s.base, Pos: b.pos}, nil
		}
	}
	return end, nil
}

// SegmentTime is one segment as ListOffsets v0 sees it: its base offset
// (at least the log start offset) and when its file was last modified,
// in Unix milliseconds.
type SegmentTime struct {
	BaseOffset   int64
	LastModified int64
}

// SegmentTimes lists the segments oldest first, and whether the active
// (last) segment holds any data. It takes no lock: the list is a snapshot.
func (l *Log) SegmentTimes() ([]SegmentTime, bool) {
	segs := l.segments()
	start := l.logStartOffset.Load()
	out := make([]SegmentTime, 0, len(segs))
	for _, s := range segs {
		st := SegmentTime{BaseOffset: max(s.base, start), LastModified: -1}
		if fi, err := s.log.Stat(); err == nil {
			st.LastModified = fi.ModTime().UnixMilli()
		}
		out = append(out, st)
	}
	return out, len(segs) > 0 && segs[len(segs)-1].size.Load() > 0
}

// LogStartOffset is the first offset readable.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.endPos.Load().Offset }

// EndPosition is the log end with its place on disk.
func (l *Log) EndPosition() Position { return *l.endPos.Load() }

// RecoveryPoint is the offset below which everything is fsynced.
func (l *Log) RecoveryPoint() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recoveryPoint
}

// Size is the bytes of all segment files.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segments() {
		n += s.size.Load()
	}
	return n
}

// NumSegments is the number of segments (for tests and metrics).
func (l *Log) NumSegments() int { return len(l.segments()) }

// TopicID is the topic id stored in partition.metadata (zero if unknown).
func (l *Log) TopicID() [16]byte { return l.topicID }

// Topic is the partition's topic.
func (l *Log) Topic() string { return l.tp.Topic }

// Partition is the partition number.
func (l *Log) Partition() int32 { return l.tp.Partition }

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// Offline reports the sticky I/O error that took the log offline, or nil.
func (l *Log) Offline() error { return l.offlineErr() }

// Config returns the log's current configuration.
func (l *Log) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// SetConfig applies a runtime topic config change; index sizes apply to
// segments created afterwards. An invalid config is ignored with an error.
func (l *Log) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config for %s: %w", l.tp, err)
	}
	l.mu.Lock()
	l.cfg = cfg
	l.mu.Unlock()
	return nil
}

// SetHighWatermark tells retention how far it may delete: a segment is
// deleted only when the high watermark is at or past its end. Until it is
// called, retention is not fenced.
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	l.highWatermark = hw
	l.mu.Unlock()
}

// LastFlushTime is when the log was last flushed (or opened).
func (l *Log) LastFlushTime() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastFlush
}

// OffsetForTimestamp returns the first batch whose MaxTimestamp is >= ts
// (its base offset, clamped to the log start, and its max timestamp) using
// the time index; the caller may refine inside the batch.
func (l *Log) OffsetForTimestamp(ts int64) (offset int64, timestamp int64, found bool, err error) {
	if err := l.offlineErr(); err != nil {
		return -1, -1, false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lso := l.logStartOffset.Load()
	buf := make([]byte, batchPrefix)
	for _, s := range l.segments() {
		if err := l.statsLocked(s); err != nil {
			return -1, -1, false, fmt.Errorf("offset for timestamp in %s: %w", l.tp, err)
		}
		if s.maxTimestamp < ts || s.nextOffset <= lso {
			continue
		}
		pos := int64(0)
		if e, ok := s.timeIndex.lookup(ts); ok {
			pos = s.index.lookup(e.rel)
		}
		size := s.size.Load()
		for pos < size {
			b, err := s.readBounds(pos, size, buf)
			if err != nil {
				return -1, -1, false, fmt.Errorf("offset for timestamp in %s: %w", l.tp, err)
			}
			if b.maxTimestamp >= ts && b.lastOffset >= lso {
				return max(b.baseOffset, lso), b.maxTimestamp, true, nil
			}
			pos += b.size
		}
	}
	return -1, -1, false, nil
}

// MaxTimestamp answers ListOffsets MAX_TIMESTAMP (-3) as Kafka 3.8+ does
// (KAFKA-16310): the largest timestamp in the log, the offset of the first
// record that holds it, and the partition leader epoch of its batch (-1 when
// the batch has none). All are -1 when the log holds no record at or after
// its log start offset.
//
// Only the segment stats are kept on append (the largest batch MaxTimestamp
// and the last offset of the first batch holding it, as the time index
// needs): the record is found here by decoding that one batch, a rare
// request's cost that keeps record decoding off the produce path. Ties go to
// the earliest segment and batch. Safe for concurrent use.
func (l *Log) MaxTimestamp() (offset, timestamp int64, epoch int32, err error) {
	if err := l.offlineErr(); err != nil {
		return -1, -1, -1, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lso := l.logStartOffset.Load()
	var seg *segment
	for _, s := range l.segments() {
		if err := l.statsLocked(s); err != nil {
			return -1, -1, -1, fmt.Errorf("max timestamp of %s: %w", l.tp, err)
		}
		if s.maxTimestamp >= 0 && s.offsetOfMaxTimestamp >= lso && (seg == nil || s.maxTimestamp > seg.maxTimestamp) {
			seg = s
		}
	}
	if seg == nil {
		return -1, -1, -1, nil
	}
	offset, timestamp, epoch, err = seg.offsetOfMaxTimestampRecord()
	if err != nil {
		return -1, -1, -1, fmt.Errorf("max timestamp of %s: %w", l.tp, err)
	}
	return offset, timestamp, epoch, nil
}

// LeaderEpochs returns a copy of the leader epoch cache.
func (l *Log) LeaderEpochs() []EpochEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epochs.clone()
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <= epoch
// and its end offset (the next epoch's start, or the log end offset for the
// latest epoch); -1, -1 when unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epochs.endOffsetFor(epoch, l.endPos.Load().Offset)
}

// AssignLeaderEpoch records that epoch starts at startOffset (a new leader
// does this with its log end offset before it appends).
func (l *Log) AssignLeaderEpoch(epoch int32, startOffset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.offlineErr(); err != nil {
		return err
	}
	if l.epochs.assign(epoch, startOffset) {
		if err := l.writeEpochsLocked(); err != nil {
			return l.goOffline(err)
		}
	}
	return nil
}

// DeleteRecordsBefore moves the log start offset up to offset (DeleteRecords)
// and deletes the segments wholly below it. offset > LogEndOffset is
// ErrOffsetOutOfRange. It returns the new log start offset.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	lso, changed, err := l.deleteRecordsBeforeLocked(offset)
	l.mu.Unlock()
	if changed && l.hooks.logStartChanged != nil {
		l.hooks.logStartChanged(l)
	}
	return lso, err
}

func (l *Log) deleteRecordsBeforeLocked(offset int64) (int64, bool, error) {
	if err := l.offlineErr(); err != nil {
		return 0, false, err
	}
	if l.closed {
		return 0, false, ErrClosed
	}
	leo := l.endPos.Load().Offset
	lso := l.logStartOffset.Load()
	if offset > leo || offset < 0 {
		return lso, false, fmt.Errorf("delete records of %s before %d past log end %d: %w", l.tp, offset, leo, ErrOffsetOutOfRange)
	}
	if offset <= lso {
		return lso, false, nil
	}
	if err := l.setLogStartLocked(offset); err != nil {
		return 0, false, err
	}
	segs := l.segments()
	n := 0
	for n+1 < len(segs) && segs[n+1].base <= offset {
		n++
	}
	if err := l.deleteSegmentsLocked(n); err != nil {
		return 0, true, err
	}
	return offset, true, nil
}

func (l *Log) setLogStartLocked(offset int64) error {
	l.logStartOffset.Store(offset)
	if l.epochs.truncateFromStart(offset) {
		if err := l.writeEpochsLocked(); err != nil {
			return l.goOffline(err)
		}
	}
	return nil
}

// deleteSegmentsLocked removes the n oldest segments from the log (never the
// last one): their files are renamed to .deleted and removed after
// FileDeleteDelayMs, so readers holding them can finish.
func (l *Log) deleteSegmentsLocked(n int) error {
	if n <= 0 {
		return nil
	}
	segs := l.segments()
	victims := segs[:n]
	rest := append([]*segment(nil), segs[n:]...)
	l.segs.Store(&rest)
	for _, s := range victims {
		s.deleted.Store(true)
		if err := s.renameFiles(l.fs, deletedSuffix); err != nil {
			return l.goOffline(fmt.Errorf("%w (for deletion)", err))
		}
		l.scheduleDelete(s)
	}
	// Drop producer snapshots below the new first segment, keeping the newest.
	for len(l.snapshots) > 1 && l.snapshots[0] < rest[0].base {
		_ = l.fs.Remove(l.snapshotPath(l.snapshots[0]))
		l.snapshots = l.snapshots[1:]
	}
	return nil
}

func (l *Log) scheduleDelete(s *segment) {
	d := &pendingDelete{}
	d.run = func() {
		s.close()
		for _, suf := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
			name := s.path(suf) + deletedSuffix
			if err := l.fs.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				l.logger.Warn("removing deleted segment file failed", "file", name, "err", err)
			}
		}
		l.pendingMu.Lock()
		l.pendingDeletes = slices.DeleteFunc(l.pendingDeletes, func(p *pendingDelete) bool { return p == d })
		l.pendingMu.Unlock()
	}
	if l.cfg.FileDeleteDelayMs == 0 {
		d.once.Do(d.run)
		return
	}
	l.pendingMu.Lock()
	l.pendingDeletes = append(l.pendingDeletes, d)
	l.pendingMu.Unlock()
	d.timer = time.AfterFunc(time.Duration(l.cfg.FileDeleteDelayMs)*time.Millisecond, func() { d.once.Do(d.run) })
}

// runPendingDeletes removes every scheduled segment now (on close).
func (l *Log) runPendingDeletes() {
	l.pendingMu.Lock()
	pending := slices.Clone(l.pendingDeletes)
	l.pendingMu.Unlock()
	for _, d := range pending {
		if d.timer != nil {
			d.timer.Stop()
		}
		d.once.Do(d.run)
	}
}

// EnforceRetention deletes the oldest segments that break retention.ms
// (largest timestamp older than now - RetentionMs), retention.bytes (the
// log stays at least RetentionBytes without them) or lie wholly below the
// log start offset. Like Kafka it may delete the active segment, rolling a
// new empty one first, and never deletes past the high watermark. It
// advances LogStartOffset and returns the number of segments deleted.
func (l *Log) EnforceRetention(now time.Time) (int, error) {
	l.mu.Lock()
	n, err := l.enforceRetentionLocked(now)
	l.mu.Unlock()
	if n > 0 && l.hooks.logStartChanged != nil {
		l.hooks.logStartChanged(l)
	}
	return n, err
}

func (l *Log) enforceRetentionLocked(now time.Time) (int, error) {
	if err := l.offlineErr(); err != nil {
		return 0, err
	}
	if l.closed {
		return 0, nil
	}
	segs := l.segments()
	leo := l.endPos.Load().Offset
	lso := l.logStartOffset.Load()
	var total int64
	for _, s := range segs {
		total += s.size.Load()
	}
	nowMs := now.UnixMilli()
	n := 0
	for n < len(segs) {
		s := segs[n]
		size := s.size.Load()
		upper := leo
		if n+1 < len(segs) {
			upper = segs[n+1].base
		} else if size == 0 {
			break // the last segment and empty
		}
		if l.highWatermark < upper {
			break
		}
		// retention.ms and retention.bytes apply only with cleanup.policy delete.
		byTime := false
		if l.cfg.Delete && l.cfg.RetentionMs >= 0 {
			if err := l.statsLocked(s); err != nil {
				return 0, l.goOffline(err)
			}
			byTime = nowMs-s.largestTimestamp() > l.cfg.RetentionMs
		}
		bySize := l.cfg.Delete && l.cfg.RetentionBytes >= 0 && total-size >= l.cfg.RetentionBytes
		byStart := n+1 < len(segs) && segs[n+1].base <= lso
		if !byTime && !bySize && !byStart {
			break
		}
		total -= size
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(segs) {
		if _, err := l.rollLocked(leo); err != nil {
			return 0, l.goOffline(err)
		}
	}
	newStart := l.segments()[n].base
	if err := l.deleteSegmentsLocked(n); err != nil {
		return 0, err
	}
	if newStart > lso {
		if err := l.setLogStartLocked(newStart); err != nil {
			return n, err
		}
	}
	l.logger.Info("deleted segments by retention", "segments", n, "log_start_offset", l.logStartOffset.Load())
	return n, nil
}

// TruncateTo removes every batch holding offsets at or past offset
// (follower truncation, KIP-101). A batch that straddles offset is removed
// whole, so the new log end offset may be below offset. Below the log start
// the log is emptied and restarts at offset.
func (l *Log) TruncateTo(offset int64) error {
	l.flushMu.Lock() // no flush may hold segments we are about to cut
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.offlineErr(); err != nil {
		return err
	}
	if l.closed {
		return ErrClosed
	}
	if offset < 0 {
		return fmt.Errorf("truncate %s to %d: %w", l.tp, offset, ErrOffsetOutOfRange)
	}
	if offset >= l.endPos.Load().Offset {
		return nil
	}
	l.noteTruncation(offset)
	// Odd while the truncation runs: segment bytes may be rewritten, so
	// no Read takes or uses a read hint across it.
	l.truncations.Add(1)
	defer l.truncations.Add(1)
	if err := l.truncateLocked(offset); err != nil {
		return l.goOffline(err)
	}
	return nil
}

func (l *Log) truncateLocked(offset int64) error {
	l.tail.reset()
	segs := l.segments()
	lso := l.logStartOffset.Load()
	if offset < lso || offset <= segs[0].base {
		// Empty the log and restart at offset.
		s, err := openSegment(l.fs, l.caches, l.dir, offset, l.cfg, !l.segmentFileExists(offset), true, l.clock())
		if err != nil {
			return err
		}
		if s.size.Load() > 0 {
			if err := s.log.Truncate(0); err != nil {
				return fmt.Errorf("truncate %s: %w", s.log.Name(), err)
			}
			s.size.Store(0)
		}
		// The segment at base==offset (if any) is reopened above; delete the rest.
		var victims []*segment
		for _, old := range segs {
			if old.base == offset {
				old.deleted.Store(true)
				old.close()
				continue
			}
			victims = append(victims, old)
		}
		all := append(victims, s)
		l.segs.Store(&all)
		if err := l.deleteSegmentsLocked(len(victims)); err != nil {
			return err
		}
		if err := errors.Join(s.index.reset(), s.timeIndex.reset()); err != nil {
			return err
		}
		s.rollJitter(l.cfg)
		l.logStartOffset.Store(offset)
		l.epochs.entries = nil
		l.publishEndLocked(Position{Offset: offset, SegmentBase: offset, Pos: 0})
	} else {
		keep := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset })
		// Delete segments wholly at or past offset, newest first.
		later := segs[keep:]
		cut := append([]*segment(nil), segs[:keep]...)
		l.segs.Store(&cut)
		for _, s := range later {
			s.deleted.Store(true)
			if err := s.renameFiles(l.fs, deletedSuffix); err != nil {
				return fmt.Errorf("%w (for deletion)", err)
			}
			l.scheduleDelete(s)
		}
		s := cut[len(cut)-1]
		if err := s.activate(); err != nil {
			return err
		}
		buf := make([]byte, batchPrefix)
		b, found, err := s.findBatch(offset, s.size.Load(), buf)
		if err != nil {
			return err
		}
		if found {
			if err := s.log.Truncate(b.pos); err != nil {
				return fmt.Errorf("truncate %s to %d: %w", s.log.Name(), b.pos, err)
			}
			s.size.Store(b.pos)
		}
		if err := s.rebuildIndexes(l.cfg); err != nil {
			return err
		}
		leo := s.nextOffset
		if len(cut) > 1 {
			if err := l.statsLocked(cut[len(cut)-2]); err != nil {
				return err
			}
			leo = max(leo, cut[len(cut)-2].nextOffset)
		}
		l.publishEndLocked(Position{Offset: leo, SegmentBase: s.base, Pos: s.size.Load()})
	}
	leo := l.endPos.Load().Offset
	l.epochs.truncateFromEnd(leo)
	if err := l.writeEpochsLocked(); err != nil {
		return err
	}
	l.recoveryPoint = min(l.recoveryPoint, leo)
	snaps := slices.Clone(l.snapshots)
	return l.loadProducerStateLocked(snaps)
}

func (l *Log) segmentFileExists(base int64) bool {
	ok, _ := fileExists(l.fs, filepath.Join(l.dir, filenamePrefix(base)+logSuffix))
	return ok
}

// Close flushes the log, seals the active segment's indexes (trimmed, as
// Kafka leaves them), writes a producer snapshot and closes every file.
// Scheduled segment deletions run now. An offline log is only closed.
func (l *Log) Close() error {
	l.stopCleaning()
	ferr := l.Flush()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.asyncFlushes.Wait()
	l.runPendingDeletes()

	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if l.offlineErr() == nil {
		if ferr != nil {
			errs = append(errs, ferr)
		}
		segs := l.segments()
		active := segs[len(segs)-1]
		errs = append(errs,
			active.timeIndex.maybeAppend(active.maxTimestamp, active.relOffset(active.offsetOfMaxTimestamp), true),
			active.seal(), active.index.sync(), active.timeIndex.sync())
		l.writeSnapshotLocked(l.endPos.Load().Offset)
	}
	for _, s := range l.segments() {
		errs = append(errs, s.close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", l.tp, err)
	}
	return nil
}

// closeForDelete closes the files without sealing anything (the partition
// dir is about to be removed).
func (l *Log) closeForDelete() {
	l.stopCleaning()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.asyncFlushes.Wait()
	l.runPendingDeletes()
	l.mu.Lock()
	defer l.mu.Unlock()
	closeAll(l.segments())
}
