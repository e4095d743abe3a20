package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Config is the per-log configuration, built by callers from a topic's
// configs (segment.bytes, segment.ms, ...). Times are in milliseconds.
type Config struct {
	SegmentBytes          int64 // segment.bytes
	SegmentMs             int64 // segment.ms
	SegmentJitterMs       int64 // segment.jitter.ms
	IndexIntervalBytes    int32 // index.interval.bytes
	MaxIndexSize          int32 // segment.index.bytes
	RetentionMs           int64 // retention.ms, -1 = forever
	RetentionBytes        int64 // retention.bytes, -1 = unlimited
	FileDeleteDelayMs     int64 // file.delete.delay.ms
	FlushIntervalMessages int64 // flush.messages
	FlushIntervalMs       int64 // flush.ms

	// Compact and Delete are cleanup.policy: "compact" turns on the log
	// cleaner for this log, "delete" turns on time and size retention
	// (retention.ms and retention.bytes apply only with Delete).
	Compact bool
	Delete  bool
	// DeleteRetentionMs is delete.retention.ms: how long a tombstone (a
	// record with a null value) survives after the cleaner first saw it.
	DeleteRetentionMs int64
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: the share of the
	// log not yet cleaned that makes the cleaner pick it.
	MinCleanableDirtyRatio float64
	// MinCompactionLagMs (min.compaction.lag.ms): records newer than this
	// stay uncompacted. MaxCompactionLagMs (max.compaction.lag.ms): a log
	// whose oldest dirty record is older than this is cleaned whatever its
	// dirty ratio.
	MinCompactionLagMs int64
	MaxCompactionLagMs int64
}

// DefaultConfig returns Kafka's topic defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * 60 * 60 * 1000,
		SegmentJitterMs:        0,
		IndexIntervalBytes:     4096,
		MaxIndexSize:           10 << 20,
		RetentionMs:            7 * 24 * 60 * 60 * 1000,
		RetentionBytes:         -1,
		FileDeleteDelayMs:      60000,
		FlushIntervalMessages:  math.MaxInt64,
		FlushIntervalMs:        math.MaxInt64,
		Delete:                 true,
		DeleteRetentionMs:      24 * 60 * 60 * 1000,
		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,
	}
}

// Validate reports the first invalid field, with Kafka's limits.
func (c Config) Validate() error {
	switch {
	case c.SegmentBytes < 14 || c.SegmentBytes > math.MaxInt32:
		return fmt.Errorf("segment.bytes %d out of range [14, %d]", c.SegmentBytes, math.MaxInt32)
	case c.SegmentMs < 1:
		return fmt.Errorf("segment.ms %d must be at least 1", c.SegmentMs)
	case c.SegmentJitterMs < 0:
		return fmt.Errorf("segment.jitter.ms %d must not be negative", c.SegmentJitterMs)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("index.interval.bytes %d must not be negative", c.IndexIntervalBytes)
	case c.MaxIndexSize < 12:
		return fmt.Errorf("segment.index.bytes %d must be at least 12", c.MaxIndexSize)
	case c.RetentionMs < -1:
		return fmt.Errorf("retention.ms %d must be -1 or more", c.RetentionMs)
	case c.RetentionBytes < -1:
		return fmt.Errorf("retention.bytes %d must be -1 or more", c.RetentionBytes)
	case c.FileDeleteDelayMs < 0:
		return fmt.Errorf("file.delete.delay.ms %d must not be negative", c.FileDeleteDelayMs)
	case c.FlushIntervalMessages < 1:
		return fmt.Errorf("flush.messages %d must be at least 1", c.FlushIntervalMessages)
	case c.FlushIntervalMs < 0:
		return fmt.Errorf("flush.ms %d must not be negative", c.FlushIntervalMs)
	case c.DeleteRetentionMs < 0:
		return fmt.Errorf("delete.retention.ms %d must not be negative", c.DeleteRetentionMs)
	case !(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1):
		return fmt.Errorf("min.cleanable.dirty.ratio %v out of range [0, 1]", c.MinCleanableDirtyRatio)
	case c.MinCompactionLagMs < 0:
		return fmt.Errorf("min.compaction.lag.ms %d must not be negative", c.MinCompactionLagMs)
	case c.MaxCompactionLagMs < 1:
		return fmt.Errorf("max.compaction.lag.ms %d must be at least 1", c.MaxCompactionLagMs)
	}
	return nil
}

// ManagerConfig configures a Manager (Kafka's LogManager); it comes from
// server.properties (log.dirs, node.id, log.retention.check.interval.ms, ...).
type ManagerConfig struct {
	Dirs      []string
	NodeID    int32
	ClusterID string // "" accepts whatever meta.properties holds (or writes none)
	FS        FS     // nil = OSFS
	Clock     func() time.Time
	// RetentionCheckIntervalMs is log.retention.check.interval.ms; <= 0
	// disables the background retention task.
	RetentionCheckIntervalMs int64
	// FlushCheckIntervalMs is log.flush.scheduler.interval.ms; <= 0 disables
	// time-based flushing (flush.ms).
	FlushCheckIntervalMs int64
	// RecoveryPointCheckpointIntervalMs is
	// log.flush.offset.checkpoint.interval.ms; <= 0 disables periodic
	// checkpoints (Close still writes them).
	RecoveryPointCheckpointIntervalMs int64
	Logger                            *slog.Logger // nil = slog.Default()

	// CleanerEnable is log.cleaner.enable: run CleanerThreads
	// (log.cleaner.threads) goroutines compacting logs whose Config.Compact
	// is set. A cleaner that finds nothing to clean waits CleanerBackoffMs
	// (log.cleaner.backoff.ms). CleanerDedupeBufferSize
	// (log.cleaner.dedupe.buffer.size) bounds the key map of all threads
	// together, counted like Kafka at 24 bytes a key; a pass whose dirty
	// section has more keys cleans only what fits. The zero value disables
	// the cleaner (Compact still works through Manager.Clean).
	CleanerEnable           bool
	CleanerThreads          int
	CleanerBackoffMs        int64
	CleanerDedupeBufferSize int64

	// OnFlush, when set, is called after each log flush that synced
	// something, with how long the flush took (Kafka's
	// LogFlushRateAndTimeMs). It must not block.
	OnFlush func(time.Duration)

	// MaxOpenSegmentFiles bounds the .log files of inactive (rolled)
	// segments kept open; the least recently used one is closed when a new
	// one opens, and reopened on its next read. Active segments hold one
	// descriptor each, outside this bound. 0 = DefaultMaxOpenSegmentFiles;
	// either way at most half of RLIMIT_NOFILE.
	MaxOpenSegmentFiles int
	// IndexCacheBytes bounds the memory of index entries loaded from index
	// files (by lookups below an active segment's last few hundred entries,
	// or in inactive segments). 0 = DefaultIndexCacheBytes.
	IndexCacheBytes int64
}

// DefaultManagerConfig returns Kafka's defaults for a single log dir.
func DefaultManagerConfig(dir string) ManagerConfig {
	return ManagerConfig{
		Dirs:                              []string{dir},
		NodeID:                            1,
		FS:                                OSFS,
		Clock:                             time.Now,
		RetentionCheckIntervalMs:          300000,
		FlushCheckIntervalMs:              math.MaxInt64,
		RecoveryPointCheckpointIntervalMs: 60000,
		CleanerEnable:                     true,
		CleanerThreads:                    1,
		CleanerBackoffMs:                  15000,
		CleanerDedupeBufferSize:           128 << 20,
	}
}

// Validate reports the first invalid field.
func (c ManagerConfig) Validate() error {
	if len(c.Dirs) == 0 {
		return errors.New("no log dirs")
	}
	seen := map[string]bool{}
	for _, d := range c.Dirs {
		if d == "" {
			return errors.New("empty log dir name")
		}
		if seen[d] {
			return fmt.Errorf("log dir %s listed twice", d)
		}
		seen[d] = true
	}
	if c.NodeID < 0 {
		return fmt.Errorf("node.id %d must not be negative", c.NodeID)
	}
	if c.CleanerThreads < 0 {
		return fmt.Errorf("log.cleaner.threads %d must not be negative", c.CleanerThreads)
	}
	if c.CleanerBackoffMs < 0 {
		return fmt.Errorf("log.cleaner.backoff.ms %d must not be negative", c.CleanerBackoffMs)
	}
	if c.CleanerDedupeBufferSize < 0 {
		return fmt.Errorf("log.cleaner.dedupe.buffer.size %d must not be negative", c.CleanerDedupeBufferSize)
	}
	return nil
}

// Errors returned by the log. Callers map them to Kafka error codes.
var (
	// ErrOffsetOutOfRange: the offset is below LogStartOffset or above LogEndOffset.
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrLogOffline: an earlier write or fsync failed; the log accepts no
	// more appends or reads until it is reopened (after recovery).
	ErrLogOffline = errors.New("log is offline")
	// ErrOutOfOrderSequence: an idempotent producer's sequence has a gap,
	// or a new producer (or new epoch) did not start at sequence 0.
	ErrOutOfOrderSequence = errors.New("out of order sequence number")
	// ErrInvalidProducerEpoch: the batch's producer epoch is older than the
	// producer's current epoch (the producer was fenced).
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrCorrupt: bytes on disk or handed to Append are not a sane v2 batch.
	ErrCorrupt = errors.New("corrupt record batch")
	// ErrClosed: the log or manager was closed.
	ErrClosed = errors.New("log closed")
	// ErrInconsistentTopicID: the partition exists with another topic id.
	ErrInconsistentTopicID = errors.New("inconsistent topic id")
)
