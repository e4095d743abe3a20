package group

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Log is one partition of __consumer_offsets as the coordinator uses it.
// Implementations must be safe for concurrent use.
type Log interface {
	// Append writes one record batch as the partition's leader and returns
	// once it is in the log (as durable as the topic's flush settings
	// make it). An error means nothing was acknowledged.
	Append(batch []byte) error
	// Replay calls fn with every batch from the LogStartOffset to the log
	// end, in offset order. An error from fn stops the replay.
	Replay(fn func(batch []byte) error) error
}

// Host is what the coordinator needs from the broker that runs it. Its
// methods are called with Coordinator.mu held (OffsetsLog) or a group's mu
// held (PartitionExists), so they must not call back into the Coordinator.
type Host interface {
	// OffsetsLog returns partition p of __consumer_offsets when this node
	// leads it, creating the topic first if needed. An error means this
	// node cannot coordinate the groups of p (NOT_COORDINATOR).
	OffsetsLog(p int32) (Log, error)
	// PartitionExists reports whether a topic partition exists; commits
	// and offset deletions for others get UNKNOWN_TOPIC_OR_PARTITION.
	PartitionExists(topic string, partition int32) bool
	// Topics returns the cluster's topics as consumer groups see them
	// (ids, partition counts, replica racks). It must be cheap when
	// nothing changed: it is called on every ConsumerGroupHeartbeat.
	Topics() *TopicImage
}

// ErrClosed is returned by LoadPartition when the coordinator is closed or
// closes while the partition is being replayed: nothing was loaded, and
// nothing is wrong with the log.
var ErrClosed = errors.New("group coordinator closed")

// Coordinator serves the groups whose __consumer_offsets partitions this
// node leads. Create it with New, load existing partitions with
// LoadPartition (synchronously, at start) or OnElection (in the
// background, on a leadership change), and stop it with Close. Safe for
// concurrent use.
type Coordinator struct {
	cfg    Config
	host   Host
	logger *slog.Logger
	clock  func() time.Time

	// closing is set first thing in Close, before mu is taken, so that a
	// replay holding mu stops at its next batch.
	closing atomic.Bool

	mu     sync.Mutex
	loaded map[int32]Log // partitions whose groups are in groups
	groups map[string]*group
	closed bool

	// ops are the loads and unloads queued by OnElection and
	// OnResignation, run in order by the loader goroutine.
	ops  chan func()
	stop chan struct{}
	wg   sync.WaitGroup // the expiry and loader goroutines
}

// New starts a coordinator with no partition loaded, and its offset
// expiry goroutine.
func New(cfg Config, host Host, logger *slog.Logger) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("group coordinator config: %w", err)
	}
	if logger == nil {
		logger = slog.Default()
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	c := &Coordinator{
		cfg: cfg, host: host, logger: logger, clock: clock,
		loaded: map[int32]Log{}, groups: map[string]*group{},
		ops:  make(chan func(), 1024),
		stop: make(chan struct{}),
	}
	c.wg.Add(2)
	go c.expiryLoop()
	go c.loaderLoop()
	return c, nil
}

// OnElection loads partition p of __consumer_offsets in the background,
// after the loads and unloads queued before it, as Kafka's coordinator
// does when this node becomes the partition's leader. A load that fails is
// logged; one cut short by Close is not (the log may be closing). The
// broker's metadata goroutine calls it; it never blocks once Close has
// begun.
func (c *Coordinator) OnElection(p int32, log Log) {
	c.enqueue(func() {
		if err := c.LoadPartition(p, log); err != nil && !errors.Is(err, ErrClosed) {
			c.logger.Error("load group coordinator partition", "partition", p, "err", err)
		}
	})
}

// OnResignation unloads partition p in the background, in order with the
// other loads and unloads, when leadership of it moved away.
func (c *Coordinator) OnResignation(p int32) {
	c.enqueue(func() { c.UnloadPartition(p) })
}

func (c *Coordinator) enqueue(fn func()) {
	if c.closing.Load() {
		return
	}
	select {
	case c.ops <- fn:
	case <-c.stop:
	}
}

// loaderLoop runs queued loads and unloads until Close.
func (c *Coordinator) loaderLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case fn := <-c.ops:
			if c.closing.Load() {
				return
			}
			fn()
		}
	}
}

// Close stops timers and the expiry goroutine. Parked JoinGroup and
// SyncGroup requests are answered with NOT_COORDINATOR so that clients
// look for the coordinator again. After Close nothing is appended.
//
// A load in progress stops at its next batch (LoadPartition returns
// ErrClosed), and the loads queued by OnElection are dropped: Close
// returns only when the loader goroutine has exited, so the caller may
// close the logs right after.
func (c *Coordinator) Close() {
	c.closing.Store(true)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	groups := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	close(c.stop)
	c.wg.Wait()
	for _, g := range groups {
		g.mu.Lock()
		g.shutdownLocked()
		g.unlock()
	}
}

// PartitionFor is the __consumer_offsets partition of a group, as Kafka
// computes it: abs(groupID.hashCode()) % offsets.topic.num.partitions.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.cfg.NumPartitions)
}

// PartitionFor is Kafka's group to __consumer_offsets partition mapping
// for n partitions.
func PartitionFor(groupID string, n int32) int32 {
	h := javaStringHashCode(groupID)
	if h == -1<<31 {
		h = 0 // Kafka's Utils.abs
	} else if h < 0 {
		h = -h
	}
	return h % n
}

// javaStringHashCode is Java's String.hashCode over UTF-16 code units.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// LoadPartition replays partition p of __consumer_offsets and takes over
// its groups. The broker calls it at start-up for every partition it
// leads; partitions not loaded are loaded on first use. It returns
// ErrClosed, having loaded nothing, when Close has begun.
func (c *Coordinator) LoadPartition(p int32, log Log) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closing.Load() {
		return ErrClosed
	}
	if _, ok := c.loaded[p]; ok {
		return nil
	}
	return c.loadLocked(p, log)
}

func (c *Coordinator) loadLocked(p int32, log Log) error {
	groups, err := replay(c, log)
	if err != nil {
		if c.closing.Load() {
			// The log may have failed because it is closing too.
			return fmt.Errorf("load __consumer_offsets-%d: %w", p, ErrClosed)
		}
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, err)
	}
	c.loaded[p] = log
	for id, g := range groups {
		c.groups[id] = g
		g.mu.Lock()
		for _, m := range g.members {
			g.resetHeartbeatLocked(m)
		}
		if g.cg != nil {
			for _, m := range g.cg.members {
				g.resetConsumerSessionLocked(g.cg, m)
				if m.state == memberUnrevoked {
					g.armRevokeTimerLocked(g.cg, m)
				}
			}
		}
		g.unlock()
	}
	if len(groups) > 0 {
		c.logger.Info("loaded groups", "partition", p, "groups", len(groups))
	}
	return nil
}

// group returns the live group id, creating an Empty one when create is
// set. A nil group with code 0 means the group does not exist. A code is
// NOT_COORDINATOR (this node does not lead the group's partition) or
// COORDINATOR_NOT_AVAILABLE (closed, or the partition failed to load).
func (c *Coordinator) group(id string, create bool) (*group, int16) {
	p := c.PartitionFor(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	log, ok := c.loaded[p]
	if !ok {
		var err error
		log, err = c.host.OffsetsLog(p)
		if err != nil {
			c.logger.Debug("not coordinator", "group", id, "partition", p, "err", err)
			return nil, kerr.NotCoordinator.Code
		}
		if err := c.loadLocked(p, log); err != nil {
			c.logger.Error("load group partition", "partition", p, "err", err)
			return nil, kerr.CoordinatorNotAvailable.Code
		}
	}
	g := c.groups[id]
	if g != nil && g.dead.Load() {
		delete(c.groups, id)
		g = nil
	}
	if g == nil && create {
		g = newGroup(c, id, log)
		c.groups[id] = g
	}
	return g, 0
}

// snapshot lists the live groups.
func (c *Coordinator) snapshot() []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		if !g.dead.Load() {
			out = append(out, g)
		}
	}
	return out
}

// forget removes a group that became Dead from the map.
func (c *Coordinator) forget(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[g.id] == g {
		delete(c.groups, g.id)
	}
}

// newMemberID makes a member id as Kafka does: client id, a dash, a UUID.
func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return clientID + "-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// expiryLoop removes expired offsets every RetentionCheckInterval.
func (c *Coordinator) expiryLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.RetentionCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.expireOffsets()
		}
	}
}

// expireOffsets applies offsets.retention.minutes to every Empty group and
// removes groups left with nothing.
func (c *Coordinator) expireOffsets() {
	now := c.clock()
	for _, g := range c.snapshot() {
		g.mu.Lock()
		dead := g.expireLocked(now)
		g.unlock()
		if dead {
			c.forget(g)
		}
	}
}

// UnloadPartition gives up partition p of __consumer_offsets when this
// broker stops leading it: its groups are dropped from memory (parked
// requests get NOT_COORDINATOR) so that a later LoadPartition replays the
// log the new leader wrote instead of serving stale state.
func (c *Coordinator) UnloadPartition(p int32) {
	c.mu.Lock()
	if _, ok := c.loaded[p]; !ok {
		c.mu.Unlock()
		return
	}
	delete(c.loaded, p)
	var dropped []*group
	for id, g := range c.groups {
		if c.PartitionFor(id) == p {
			dropped = append(dropped, g)
			delete(c.groups, id)
		}
	}
	c.mu.Unlock()
	for _, g := range dropped {
		g.mu.Lock()
		g.shutdownLocked()
		g.unlock()
	}
	if len(dropped) > 0 {
		c.logger.Info("unloaded groups", "partition", p, "groups", len(dropped))
	}
}
