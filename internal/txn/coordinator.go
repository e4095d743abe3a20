package txn

import (
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Log is one partition of __transaction_state as the coordinator uses it.
// Implementations must be safe for concurrent use.
type Log interface {
	// Append writes one record batch as the partition's leader and returns
	// once it is committed. An error means nothing was acknowledged.
	Append(batch []byte) error
	// Replay calls fn with every batch from the LogStartOffset to the log
	// end, in offset order. An error from fn stops the replay.
	Replay(fn func(batch []byte) error) error
	// LeaderEpoch is the partition's leader epoch: the coordinator epoch
	// written in markers, and how the coordinator notices that it lost and
	// regained leadership (and must reload).
	LeaderEpoch() int32
}

// Markers is one transaction's outcome to write to its partitions.
type Markers struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       map[string][]int32 // topic -> partitions
}

// Host is what the coordinator needs from the broker that runs it.
// StateLog is called with Coordinator.mu held; the others with a
// transaction's mu held. None may call back into the Coordinator.
type Host interface {
	// StateLog returns partition p of __transaction_state when this node
	// leads it, creating the topic first if needed. An error means this
	// node is not the coordinator of p's ids (NOT_COORDINATOR).
	StateLog(p int32) (Log, error)
	// NextProducerID allocates a producer id never handed out before.
	NextProducerID() (int64, error)
	// WriteMarkers writes the COMMIT or ABORT marker to every partition of
	// m (local leaders directly, remote ones with WriteTxnMarkers) and
	// returns once all are written; an error means some were not.
	WriteMarkers(m Markers) error
	// PartitionExists reports whether a topic partition exists.
	PartitionExists(topic string, p int32) bool
	// GroupPartition is the __consumer_offsets partition of a group.
	GroupPartition(group string) (topic string, p int32)
	// StateLogs returns the __transaction_state partitions this node
	// leads now, by partition, without creating the topic.
	StateLogs() map[int32]Log
}

// State is a transaction's state, numbered as Kafka's TransactionState.
type State int8

// Kafka's transaction states.
const (
	Empty          State = 0
	Ongoing        State = 1
	PrepareCommit  State = 2
	PrepareAbort   State = 3
	CompleteCommit State = 4
	CompleteAbort  State = 5
	Dead           State = 6
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case Ongoing:
		return "Ongoing"
	case PrepareCommit:
		return "PrepareCommit"
	case PrepareAbort:
		return "PrepareAbort"
	case CompleteCommit:
		return "CompleteCommit"
	case CompleteAbort:
		return "CompleteAbort"
	case Dead:
		return "Dead"
	case prepareEpochFence:
		return "PrepareEpochFence"
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

func (s State) preparing() bool { return s == PrepareCommit || s == PrepareAbort }

// meta is what __transaction_state holds for a transactional id.
type meta struct {
	producerID int64
	epoch      int16
	timeout    time.Duration
	state      State
	partitions map[string]map[int32]struct{}
	start      time.Time // when the current transaction began
	updated    time.Time
	// bumped is set when the last EndTxn bumped the epoch (v5+,
	// KIP-890 part 2): a retry of it comes with epoch-1, or with
	// prevProducerID when the bump allocated a new id. Not persisted.
	bumped         bool
	prevProducerID int64
}

func (m meta) clone() meta {
	c := m
	c.partitions = make(map[string]map[int32]struct{}, len(m.partitions))
	for t, ps := range m.partitions {
		c.partitions[t] = maps.Clone(ps)
	}
	return c
}

func (m meta) markerPartitions() map[string][]int32 {
	out := make(map[string][]int32, len(m.partitions))
	for t, ps := range m.partitions {
		out[t] = slices.Sorted(maps.Keys(ps))
	}
	return out
}

// txn is one transactional id. Its mu serialises the id's requests.
type txn struct {
	id  string
	log Log // its __transaction_state partition

	mu       sync.Mutex
	meta     meta
	retrying bool // a marker retry timer is armed
}

type loadedPartition struct {
	log   Log
	epoch int32
}

// current reports whether the partition was loaded from log at its
// leader epoch. A __transaction_state deleted and created again is a new
// log whose leader epoch starts over, so the log itself is compared too
// (Logs must be comparable).
func (lp loadedPartition) current(log Log) bool {
	return lp.log == log && lp.epoch == log.LeaderEpoch()
}

// Coordinator serves the transactional ids whose __transaction_state
// partitions this node leads. Safe for concurrent use.
type Coordinator struct {
	cfg    Config
	host   Host
	logger *slog.Logger
	clock  func() time.Time

	mu     sync.Mutex
	loaded map[int32]loadedPartition
	txns   map[string]*txn
	closed bool

	stop chan struct{}
	wg   sync.WaitGroup // the timeout goroutine
}

// New starts a coordinator with no partition loaded, and its goroutine
// that aborts timed-out transactions.
func New(cfg Config, host Host, logger *slog.Logger) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("transaction coordinator config: %w", err)
	}
	if logger == nil {
		logger = slog.Default()
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	c := &Coordinator{cfg: cfg, host: host, logger: logger, clock: clock,
		loaded: map[int32]loadedPartition{}, txns: map[string]*txn{}, stop: make(chan struct{})}
	c.wg.Add(1)
	go c.timeoutLoop()
	return c, nil
}

// Close stops the timeout goroutine; marker retries stop too.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.stop)
	c.wg.Wait()
}

// isClosed reports whether Close began; it takes no lock, so it may be
// called with a transaction's mu held.
func (c *Coordinator) isClosed() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// PartitionFor is the __transaction_state partition of a transactional
// id, as Kafka computes it: abs(id.hashCode()) % N.
func (c *Coordinator) PartitionFor(id string) int32 { return PartitionFor(id, c.cfg.NumPartitions) }

// PartitionFor is Kafka's transactional id to partition mapping for n
// partitions.
func PartitionFor(id string, n int32) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(id)) {
		h = 31*h + int32(u)
	}
	if h == math.MinInt32 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

// LoadPartition replays partition p of __transaction_state and takes over
// its transactional ids (at start-up; otherwise partitions load on first
// use).
func (c *Coordinator) LoadPartition(p int32, log Log) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lp, ok := c.loaded[p]; ok && lp.current(log) {
		return nil
	}
	return c.loadLocked(p, log)
}

func (c *Coordinator) loadLocked(p int32, log Log) error {
	epoch := log.LeaderEpoch()
	metas, err := replay(log)
	if err != nil {
		return fmt.Errorf("load __transaction_state-%d: %w", p, err)
	}
	for id := range c.txns {
		if c.PartitionFor(id) == p {
			delete(c.txns, id)
		}
	}
	var unfinished []*txn
	for id, m := range metas {
		t := &txn{id: id, log: log, meta: m}
		c.txns[id] = t
		if m.state.preparing() {
			unfinished = append(unfinished, t)
		}
	}
	c.loaded[p] = loadedPartition{log: log, epoch: epoch}
	if len(metas) > 0 {
		c.logger.Info("loaded transactional ids", "partition", p, "ids", len(metas), "unfinished", len(unfinished))
	}
	for _, t := range unfinished {
		go func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.meta.state.preparing() {
				c.finishLocked(t)
			}
		}()
	}
	return nil
}

// get returns the transaction of id (a new Empty one when create is set,
// nil otherwise when unknown), or an error code: NOT_COORDINATOR or
// COORDINATOR_NOT_AVAILABLE (closed, or the partition failed to load).
func (c *Coordinator) get(id string, create bool) (*txn, int16) {
	p := c.PartitionFor(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	log, err := c.host.StateLog(p)
	if err != nil {
		c.logger.Debug("not transaction coordinator", "transactional.id", id, "partition", p, "err", err)
		return nil, kerr.NotCoordinator.Code
	}
	if lp, ok := c.loaded[p]; !ok || !lp.current(log) {
		if err := c.loadLocked(p, log); err != nil {
			c.logger.Error("load transaction state partition", "partition", p, "err", err)
			return nil, kerr.CoordinatorNotAvailable.Code
		}
	}
	t := c.txns[id]
	if t == nil && create {
		t = &txn{id: id, log: log, meta: meta{producerID: -1, epoch: -1, state: Empty}}
		c.txns[id] = t
	}
	return t, 0
}

// writeLocked persists m for t and then makes it t's state.
func (c *Coordinator) writeLocked(t *txn, m meta) error {
	m.updated = c.clock()
	if err := t.log.Append(encodeBatch(t.id, m, m.updated)); err != nil {
		return fmt.Errorf("write transaction state of %q: %w", t.id, err)
	}
	t.meta = m
	return nil
}

// finishLocked writes the markers of a transaction in PrepareCommit or
// PrepareAbort and completes it. On failure it arms a retry and reports
// false; the transaction stays in its Prepare state.
func (c *Coordinator) finishLocked(t *txn) bool {
	m := t.meta
	commit := m.state == PrepareCommit
	if len(m.partitions) > 0 {
		err := c.host.WriteMarkers(Markers{ProducerID: m.producerID, ProducerEpoch: m.epoch, Commit: commit,
			CoordinatorEpoch: t.log.LeaderEpoch(), Partitions: m.markerPartitions()})
		if err != nil {
			c.logger.Warn("write transaction markers", "transactional.id", t.id, "commit", commit, "err", err)
			c.retryLocked(t)
			return false
		}
	}
	done := m.clone()
	done.state = CompleteAbort
	if commit {
		done.state = CompleteCommit
	}
	done.partitions = nil
	if err := c.writeLocked(t, done); err != nil {
		c.logger.Warn("complete transaction", "transactional.id", t.id, "err", err)
		c.retryLocked(t)
		return false
	}
	return true
}

// retryLocked arms one timer to finish t again after RetryBackoff.
func (c *Coordinator) retryLocked(t *txn) {
	if t.retrying || c.isClosed() {
		return
	}
	t.retrying = true
	time.AfterFunc(c.cfg.RetryBackoff, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.retrying = false
		if t.meta.state.preparing() && !c.isClosed() {
			c.finishLocked(t)
		}
	})
}

// abortLocked aborts t's ongoing transaction with its epoch bumped, which
// fences the producer that opened it. It returns a Kafka error code.
func (c *Coordinator) abortLocked(t *txn) int16 {
	m := t.meta.clone()
	if m.epoch < math.MaxInt16-1 {
		m.epoch++
	}
	m.bumped = false // a fence, not an EndTxn: the old epoch is fenced
	m.state = PrepareAbort
	if err := c.writeLocked(t, m); err != nil {
		c.logger.Warn("abort transaction", "transactional.id", t.id, "err", err)
		return kerr.CoordinatorNotAvailable.Code
	}
	if !c.finishLocked(t) {
		return kerr.ConcurrentTransactions.Code
	}
	return 0
}

// settleLocked completes a transaction left in a Prepare state; it
// returns CONCURRENT_TRANSACTIONS while that is not possible.
func (c *Coordinator) settleLocked(t *txn) int16 {
	if t.meta.state.preparing() && !c.finishLocked(t) {
		return kerr.ConcurrentTransactions.Code
	}
	return 0
}

// fencedCode is PRODUCER_FENCED for request versions that know it
// (KIP-588), INVALID_PRODUCER_EPOCH before.
func fencedCode(version, since int16) int16 {
	if version >= since {
		return kerr.ProducerFenced.Code
	}
	return kerr.InvalidProducerEpoch.Code
}

// checkProducerLocked checks that a request comes from t's current
// producer id and epoch.
func checkProducerLocked(t *txn, producerID int64, epoch int16, version, fencedSince int16) int16 {
	if t.meta.producerID != producerID {
		return kerr.InvalidProducerIDMapping.Code
	}
	if t.meta.epoch != epoch {
		return fencedCode(version, fencedSince)
	}
	return 0
}

func (c *Coordinator) timeoutLoop() {
	defer c.wg.Done()
	tick := time.NewTicker(c.cfg.AbortCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.AbortTimedOut()
		}
	}
}

// AbortTimedOut aborts every Ongoing transaction older than its timeout,
// bumping its epoch so the producer is fenced. The timeout goroutine
// calls it every AbortCheckInterval.
func (c *Coordinator) AbortTimedOut() {
	c.loadLed()
	c.mu.Lock()
	txns := slices.Collect(maps.Values(c.txns))
	c.mu.Unlock()
	now := c.clock()
	for _, t := range txns {
		if c.isClosed() {
			return
		}
		// A transaction busy with a request (or writing markers) is
		// looked at again on the next check: never wait behind it, so
		// Close is not held up by a slow marker write.
		if !t.mu.TryLock() {
			continue
		}
		if t.meta.state == Ongoing && now.Sub(t.meta.start) > t.meta.timeout {
			c.logger.Info("aborting timed out transaction", "transactional.id", t.id, "producer.id", t.meta.producerID)
			c.abortLocked(t)
		}
		t.mu.Unlock()
	}
}

// Describe returns the state, producer id and epoch of a transactional id
// this node coordinates (for tests and tools); ok is false when unknown.
func (c *Coordinator) Describe(id string) (state State, producerID int64, epoch int16, ok bool) {
	t, code := c.get(id, false)
	if code != 0 || t == nil {
		return 0, -1, -1, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.meta.state, t.meta.producerID, t.meta.epoch, true
}
