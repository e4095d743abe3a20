package storage

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// logDir is one entry of log.dirs.
type logDir struct {
	path    string
	offline atomic.Bool // a log in it failed; no clean shutdown marker then

	cpMu sync.Mutex // serialises checkpoint file writes in this dir
}

// Manager is Kafka's LogManager: it owns every partition log in the log
// dirs, recovers them at open, and runs retention, time-based flushes and
// recovery-point checkpoints in the background.
//
// Safe for concurrent use. Lock order: Manager.mu is never held while a
// Log's mu is taken by the Manager (it copies the log list first); a Log
// calls back into the Manager only without its own mu held.
type Manager struct {
	cfg       ManagerConfig
	fs        FS
	clock     func() time.Time
	logger    *slog.Logger
	configFor func(topic string) Config
	dirs      []*logDir
	cleaner   *cleaner
	caches    *segmentCaches

	stop chan struct{}
	wg   sync.WaitGroup // background goroutines

	mu     sync.Mutex
	logs   map[TopicPartition]*Log
	dirOf  map[TopicPartition]*logDir
	closed bool
}

// OpenManager checks or writes meta.properties in every log dir, loads every
// partition dir (recovering those of a dir without a clean shutdown
// marker), removes the markers and starts the background tasks. configFor
// gives each existing topic's log config (nil = DefaultConfig). Errors name
// the file that is bad.
func OpenManager(cfg ManagerConfig, configFor func(topic string) Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("log manager config: %w", err)
	}
	if cfg.FS == nil {
		cfg.FS = OSFS
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if configFor == nil {
		configFor = func(string) Config { return DefaultConfig() }
	}
	m := &Manager{
		cfg: cfg, fs: cfg.FS, clock: cfg.Clock, logger: cfg.Logger, configFor: configFor,
		stop: make(chan struct{}), logs: map[TopicPartition]*Log{}, dirOf: map[TopicPartition]*logDir{},
	}
	m.cleaner = newCleaner(m)
	m.caches = newSegmentCaches(fdLimitedMaxFiles(cmp.Or(cfg.MaxOpenSegmentFiles, DefaultMaxOpenSegmentFiles)), cfg.IndexCacheBytes)
	for _, path := range cfg.Dirs {
		d := &logDir{path: path}
		m.dirs = append(m.dirs, d)
		err := m.loadDir(d)
		if err == nil {
			err = m.cleaner.loadCheckpoint(d)
		}
		if err != nil {
			m.closeLogs()
			m.wg.Wait()
			return nil, err
		}
	}
	if cfg.CleanerEnable {
		for range cfg.CleanerThreads {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.cleaner.run()
			}()
		}
	}
	m.startLoop(cfg.RetentionCheckIntervalMs, m.retentionTick)
	m.startLoop(cfg.FlushCheckIntervalMs, m.flushTick)
	m.startLoop(cfg.RecoveryPointCheckpointIntervalMs, m.checkpointTick)
	return m, nil
}

func (m *Manager) loadDir(d *logDir) error {
	if err := m.fs.MkdirAll(d.path, 0o755); err != nil {
		return fmt.Errorf("create log dir %s: %w", d.path, err)
	}
	if err := m.checkMetaProperties(d); err != nil {
		return err
	}
	marker := filepath.Join(d.path, cleanShutdownFile)
	clean, err := fileExists(m.fs, marker)
	if err != nil {
		return fmt.Errorf("stat %s: %w", marker, err)
	}
	rps, err := readOffsetCheckpoint(m.fs, filepath.Join(d.path, recoveryPointCheckpointFile))
	if err != nil {
		return err
	}
	starts, err := readOffsetCheckpoint(m.fs, filepath.Join(d.path, logStartCheckpointFile))
	if err != nil {
		return err
	}
	entries, err := m.fs.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("read log dir %s: %w", d.path, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		full := filepath.Join(d.path, name)
		if strings.HasSuffix(name, "-delete") {
			m.removeAsync(full)
			continue
		}
		if name == "__cluster_metadata-0" {
			continue // the Raft metadata log, not a partition (internal/metadata)
		}
		tp, ok := parsePartitionDir(name)
		if !ok || strings.Contains(name[strings.LastIndexByte(name, '-'):], ".") {
			continue
		}
		if _, dup := m.logs[tp]; dup {
			return fmt.Errorf("partition %s is in two log dirs (second: %s)", tp, full)
		}
		rp, ok := rps[tp]
		if !ok {
			rp = 0
		}
		start, ok := starts[tp]
		if !ok {
			start = 0
		}
		l, err := openLog(logParams{
			fs: m.fs, dir: full, tp: tp, cfg: m.configFor(tp.Topic), clock: m.clock, logger: m.logger,
			hooks: m.hooksFor(d), recoveryPoint: rp, logStartOffset: start, clean: clean, caches: m.caches,
		})
		if err != nil {
			return fmt.Errorf("load partition %s: %w", full, err)
		}
		m.logs[tp] = l
		m.dirOf[tp] = d
	}
	if clean {
		if err := m.fs.Remove(marker); err != nil {
			return fmt.Errorf("remove %s: %w", marker, err)
		}
		if err := m.fs.SyncDir(d.path); err != nil {
			return fmt.Errorf("fsync %s: %w", d.path, err)
		}
	}
	return nil
}

func (m *Manager) checkMetaProperties(d *logDir) error {
	path := filepath.Join(d.path, metaPropertiesFile)
	mp, found, err := readMetaProperties(m.fs, path)
	if err != nil {
		return err
	}
	if found {
		if mp.nodeID != m.cfg.NodeID {
			return fmt.Errorf("%s: node.id %d does not match configured node.id %d", path, mp.nodeID, m.cfg.NodeID)
		}
		if m.cfg.ClusterID != "" && mp.clusterID != "" && mp.clusterID != m.cfg.ClusterID {
			return fmt.Errorf("%s: cluster.id %s does not match configured cluster id %s", path, mp.clusterID, m.cfg.ClusterID)
		}
		if mp.clusterID != "" || m.cfg.ClusterID == "" {
			return nil
		}
		mp.clusterID = m.cfg.ClusterID
	} else {
		mp = metaProperties{nodeID: m.cfg.NodeID, clusterID: m.cfg.ClusterID, directoryID: FormatUUID(randomUUID())}
	}
	return writeFileAtomic(m.fs, path, encodeMetaProperties(mp))
}

func (m *Manager) hooksFor(d *logDir) logHooks {
	return logHooks{
		logStartChanged: func(*Log) {
			if err := m.writeCheckpoints(d, false); err != nil {
				m.logger.Error("writing log start offset checkpoint failed", "dir", d.path, "err", err)
			}
		},
		offline: func(*Log) { d.offline.Store(true) },
		flushed: m.cfg.OnFlush,
	}
}

// removeAsync removes a partition dir renamed for deletion in the background.
func (m *Manager) removeAsync(path string) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.fs.RemoveAll(path); err != nil {
			m.logger.Warn("removing deleted partition dir failed", "dir", path, "err", err)
		}
	}()
}

func (m *Manager) startLoop(intervalMs int64, fn func()) {
	if intervalMs <= 0 || intervalMs > int64(365*24*time.Hour/time.Millisecond) {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(time.Duration(intervalMs) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

func (m *Manager) retentionTick() {
	now := m.clock()
	for _, l := range m.Logs() {
		if _, err := l.EnforceRetention(now); err != nil && !errors.Is(err, ErrLogOffline) {
			m.logger.Error("retention failed", "partition", l.tp.String(), "err", err)
		}
	}
}

func (m *Manager) flushTick() {
	now := m.clock()
	for _, l := range m.Logs() {
		cfg := l.Config()
		if now.Sub(l.LastFlushTime()).Milliseconds() < cfg.FlushIntervalMs {
			continue
		}
		if err := l.Flush(); err != nil && !errors.Is(err, ErrLogOffline) {
			m.logger.Error("flush failed", "partition", l.tp.String(), "err", err)
		}
	}
}

func (m *Manager) checkpointTick() {
	for _, d := range m.dirs {
		if err := m.writeCheckpoints(d, true); err != nil {
			m.logger.Error("writing checkpoints failed", "dir", d.path, "err", err)
		}
	}
}

// writeCheckpoints writes the log start offset checkpoint of a dir, and
// with recovery also its recovery point checkpoint.
func (m *Manager) writeCheckpoints(d *logDir, recovery bool) error {
	d.cpMu.Lock()
	defer d.cpMu.Unlock()
	m.mu.Lock()
	var logs []*Log
	for tp, l := range m.logs {
		if m.dirOf[tp] == d {
			logs = append(logs, l)
		}
	}
	m.mu.Unlock()
	starts := map[TopicPartition]int64{}
	rps := map[TopicPartition]int64{}
	for _, l := range logs {
		starts[l.tp] = l.LogStartOffset()
		if recovery {
			rps[l.tp] = l.RecoveryPoint()
		}
	}
	if err := writeFileAtomic(m.fs, filepath.Join(d.path, logStartCheckpointFile), encodeOffsetCheckpoint(starts)); err != nil {
		return err
	}
	if recovery {
		return writeFileAtomic(m.fs, filepath.Join(d.path, recoveryPointCheckpointFile), encodeOffsetCheckpoint(rps))
	}
	return nil
}

// Get returns the log of a partition, or nil.
func (m *Manager) Get(topic string, partition int32) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs[TopicPartition{Topic: topic, Partition: partition}]
}

// GetOrCreate returns the partition's log, creating it in the log dir with
// the fewest partitions. An existing log with another (non-zero) topic id
// is ErrInconsistentTopicID.
func (m *Manager) GetOrCreate(topic string, partition int32, topicID [16]byte, cfg Config) (*Log, error) {
	if err := validateTopicName(topic); err != nil {
		return nil, err
	}
	if partition < 0 {
		return nil, fmt.Errorf("partition %d of %s is negative", partition, topic)
	}
	tp := TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if l := m.logs[tp]; l != nil {
		var zero [16]byte
		if topicID != zero && l.topicID != zero && topicID != l.topicID {
			return nil, fmt.Errorf("partition %s has topic id %s, not %s: %w", tp, FormatUUID(l.topicID), FormatUUID(topicID), ErrInconsistentTopicID)
		}
		return l, nil
	}
	var best *logDir
	count := map[*logDir]int{}
	for _, d := range m.dirOf {
		count[d]++
	}
	for _, d := range m.dirs {
		if d.offline.Load() {
			continue
		}
		if best == nil || count[d] < count[best] {
			best = d
		}
	}
	if best == nil {
		return nil, fmt.Errorf("create %s: every log dir is offline: %w", tp, ErrLogOffline)
	}
	l, err := openLog(logParams{
		fs: m.fs, dir: filepath.Join(best.path, tp.String()), tp: tp, cfg: cfg, clock: m.clock, logger: m.logger,
		hooks: m.hooksFor(best), clean: true, topicID: topicID, create: true, caches: m.caches,
	})
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", tp, err)
	}
	m.logs[tp] = l
	m.dirOf[tp] = best
	return l, nil
}

func validateTopicName(topic string) error {
	if topic == "" || topic == "." || topic == ".." || len(topic) > 249 {
		return fmt.Errorf("invalid topic name %q", topic)
	}
	for _, c := range topic {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid topic name %q", topic)
		}
	}
	return nil
}

// Delete removes a partition: its dir is renamed to
// <topic>-<partition>.<uuidhex>-delete and removed in the background.
func (m *Manager) Delete(topic string, partition int32) error {
	tp := TopicPartition{Topic: topic, Partition: partition}
	m.mu.Lock()
	l, d := m.logs[tp], m.dirOf[tp]
	delete(m.logs, tp)
	delete(m.dirOf, tp)
	m.mu.Unlock()
	if l == nil {
		return nil
	}
	l.closeForDelete()
	var id [16]byte
	_, _ = rand.Read(id[:])
	target := filepath.Join(d.path, tp.String()+"."+hex.EncodeToString(id[:])+"-delete")
	if err := m.fs.Rename(l.dir, target); err != nil {
		return fmt.Errorf("delete %s: rename %s: %w", tp, l.dir, err)
	}
	if err := m.fs.SyncDir(d.path); err != nil {
		return fmt.Errorf("delete %s: fsync %s: %w", tp, d.path, err)
	}
	m.removeAsync(target)
	m.cleaner.forget(tp)
	if err := m.writeCheckpoints(d, true); err != nil {
		return fmt.Errorf("delete %s: %w", tp, err)
	}
	if err := m.cleaner.writeCheckpoint(d); err != nil {
		return fmt.Errorf("delete %s: %w", tp, err)
	}
	return nil
}

// Logs returns every log, sorted by topic and partition.
func (m *Manager) Logs() []*Log {
	m.mu.Lock()
	out := make([]*Log, 0, len(m.logs))
	for _, l := range m.logs {
		out = append(out, l)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *Log) int {
		if c := strings.Compare(a.tp.Topic, b.tp.Topic); c != 0 {
			return c
		}
		return int(a.tp.Partition) - int(b.tp.Partition)
	})
	return out
}

// DirSizes returns, per log dir, the size of each partition ("topic-N"),
// for DescribeLogDirs.
func (m *Manager) DirSizes() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.dirs {
		out[d.path] = map[string]int64{}
	}
	for tp, l := range m.logs {
		out[m.dirOf[tp].path][tp.String()] = l.Size()
	}
	return out
}

// Dirs returns the log dirs and whether each is offline.
func (m *Manager) Dirs() map[string]bool {
	out := map[string]bool{}
	for _, d := range m.dirs {
		out[d.path] = d.offline.Load()
	}
	return out
}

// Close stops the background tasks, flushes and closes every log, writes
// the checkpoints and, in each dir whose logs all stayed online, the clean
// shutdown marker.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.wg.Wait()
	errs := m.closeLogs()
	for _, d := range m.dirs {
		if err := m.writeCheckpoints(d, true); err != nil {
			errs = append(errs, err)
			continue
		}
		if d.offline.Load() {
			continue
		}
		if err := writeFileAtomic(m.fs, filepath.Join(d.path, cleanShutdownFile), nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) closeLogs() []error {
	var errs []error
	for _, l := range m.Logs() {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
