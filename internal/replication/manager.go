package replication

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// Config is the follower side's settings, Kafka's replica.* keys.
type Config struct {
	NodeID           int32
	NumFetchers      int           // num.replica.fetchers
	FetchMaxBytes    int32         // replica.fetch.max.bytes (per partition)
	FetchResponseMax int32         // replica.fetch.response.max.bytes
	FetchMinBytes    int32         // replica.fetch.min.bytes
	FetchWaitMax     time.Duration // replica.fetch.wait.max.ms
	FetchBackoff     time.Duration // replica.fetch.backoff.ms
	SocketTimeout    time.Duration // replica.socket.timeout.ms
	ReceiveBuffer    int           // replica.socket.receive.buffer.bytes
	// Dial opens connections to leaders (nil: the real network).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS and SASL are how fetchers reach leaders: the inter-broker
	// listener's security (nil: PLAINTEXT).
	TLS    *tls.Config
	SASL   sasl.Mechanism
	Logger *slog.Logger
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig(nodeID int32) Config {
	return Config{
		NodeID:           nodeID,
		NumFetchers:      1,
		FetchMaxBytes:    1 << 20,
		FetchResponseMax: 10 << 20,
		FetchMinBytes:    1,
		FetchWaitMax:     500 * time.Millisecond,
		FetchBackoff:     time.Second,
		SocketTimeout:    30 * time.Second,
		ReceiveBuffer:    64 << 10,
	}
}

// Endpoint is where a leader broker is reached.
type Endpoint struct {
	NodeID int32
	Addr   string // host:port
}

// Manager owns every replica fetcher of this broker. Safe for concurrent
// use. Create with NewManager, stop with Close.
type Manager struct {
	cfg Config
	log *slog.Logger

	quota quotaHolder // the follower throttle (quota.go)

	mu       sync.Mutex // guards fetchers and assigned
	fetchers map[fetcherKey]*fetcher
	assigned map[*partition.Partition]fetcherKey
	closed   bool
}

type fetcherKey struct {
	leader int32
	addr   string
	slot   int
}

// NewManager returns a manager with no fetchers.
func NewManager(cfg Config) *Manager {
	if cfg.NumFetchers < 1 {
		cfg.NumFetchers = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Manager{cfg: cfg, log: cfg.Logger, fetchers: map[fetcherKey]*fetcher{}, assigned: map[*partition.Partition]fetcherKey{}}
}

// Follow makes p fetch from leader at leaderEpoch. Calling it again with a
// new leader or epoch moves the partition and truncates again first.
func (m *Manager) Follow(p *partition.Partition, leader Endpoint, leaderEpoch int32) {
	h := fnv.New32a()
	h.Write([]byte(p.Topic))
	slot := int((h.Sum32() + uint32(p.Index)) % uint32(m.cfg.NumFetchers))
	key := fetcherKey{leader: leader.NodeID, addr: leader.Addr, slot: slot}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if old, ok := m.assigned[p]; ok && old != key {
		m.fetchers[old].remove(p)
	}
	f := m.fetchers[key]
	if f == nil {
		var err error
		f, err = newFetcher(m, key)
		if err != nil {
			m.log.Error("start replica fetcher", "leader", leader.NodeID, "err", err)
			return
		}
		m.fetchers[key] = f
	}
	m.assigned[p] = key
	f.add(p, leaderEpoch)
}

// Unfollow stops fetching for p (it became leader or was removed).
func (m *Manager) Unfollow(p *partition.Partition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if key, ok := m.assigned[p]; ok {
		m.fetchers[key].remove(p)
		delete(m.assigned, p)
	}
}

// Close stops every fetcher and waits for them.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	fs := m.fetchers
	m.fetchers = map[fetcherKey]*fetcher{}
	// Unfollow after Close (an image applied during shutdown) finds nothing.
	m.assigned = map[*partition.Partition]fetcherKey{}
	m.mu.Unlock()
	for _, f := range fs {
		f.close()
	}
}

// fetchState is one partition in a fetcher.
type fetchState struct {
	p           *partition.Partition
	leaderEpoch int32
	truncated   bool // truncation by leader epoch done for this epoch
}

// fetcher pulls from one leader for a set of partitions on one goroutine,
// over one connection of its own (conn.go).
type fetcher struct {
	m      *Manager
	key    fetcherKey
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex // guards parts and changed
	parts   map[*partition.Partition]*fetchState
	changed bool // parts changed since the last snapshot
	wake    chan struct{}

	// Owned by the run goroutine, reused from fetch to fetch so that a
	// fetch allocates nothing per partition.
	conn  *leaderConn // nil until dialled, and after an error
	snap  []*fetchState
	ready []*fetchState
	byKey map[partKey]*fetchState
	got   []fetchedPartition
	sess  fetchSession
}

// partKey names a partition in a fetch: topic id and index.
type partKey struct {
	id    [16]byte
	index int32
}

func newFetcher(m *Manager, key fetcherKey) (*fetcher, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fetcher{m: m, key: key, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		parts: map[*partition.Partition]*fetchState{}, wake: make(chan struct{}, 1),
		byKey: map[partKey]*fetchState{}}
	go f.run()
	return f, nil
}

// leader returns the connection to the leader, dialling it if needed.
func (f *fetcher) leader() (*leaderConn, error) {
	if f.conn == nil {
		c, err := dialLeader(f.ctx, &f.m.cfg, f.key.addr)
		if err != nil {
			return nil, err
		}
		f.conn = c
	}
	return f.conn, nil
}

// dropConn closes the connection after an error; the next request dials
// again.
func (f *fetcher) dropConn() {
	if f.conn != nil {
		f.conn.close()
		f.conn = nil
	}
}

func (f *fetcher) add(p *partition.Partition, epoch int32) {
	f.mu.Lock()
	st := f.parts[p]
	if st == nil || st.leaderEpoch != epoch {
		f.parts[p] = &fetchState{p: p, leaderEpoch: epoch}
		f.changed = true
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) remove(p *partition.Partition) {
	f.mu.Lock()
	if _, ok := f.parts[p]; ok {
		delete(f.parts, p)
		f.changed = true
	}
	f.mu.Unlock()
}

func (f *fetcher) close() {
	f.cancel()
	<-f.done
}

// snapshot lists the partitions to fetch, sorted by topic and partition
// (sortFetchStates), in a slice kept until they change: most fetches list
// the same ones, and sorting hundreds each time showed in profiles.
func (f *fetcher) snapshot() []*fetchState {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.changed && len(f.snap) == len(f.parts) {
		return f.snap
	}
	f.snap = f.snap[:0]
	for _, st := range f.parts {
		f.snap = append(f.snap, st)
	}
	sortFetchStates(f.snap)
	f.changed = false
	return f.snap
}

// still reports whether st is still the current state of its partition.
func (f *fetcher) still(st *fetchState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[st.p] == st
}

func (f *fetcher) run() {
	defer close(f.done)
	defer f.dropConn()
	for f.ctx.Err() == nil {
		parts := f.snapshot()
		if len(parts) == 0 {
			select {
			case <-f.wake:
			case <-f.ctx.Done():
			}
			continue
		}
		ready := f.ready[:0]
		soon := false // a leader that has not applied its leadership yet
		for _, st := range parts {
			if !st.truncated {
				if err := f.truncate(st); err != nil {
					f.m.log.Debug("truncate by leader epoch", "partition", st.p.String(), "err", err)
					soon = soon || leaderNotReady(err)
					continue
				}
			}
			ready = append(ready, st)
		}
		f.ready = ready
		ready, throttled := f.m.throttleFilter(ready)
		if len(ready) == 0 {
			if soon {
				f.backoffFor(leaderNotReadyBackoff)
			} else {
				f.backoff()
			}
			continue
		}
		if err := f.fetch(ready, throttled); err != nil {
			if f.ctx.Err() == nil {
				f.m.log.Warn("replica fetch", "leader", f.key.leader, "err", err)
				f.dropConn()
				f.backoff()
			}
		}
	}
}

func (f *fetcher) backoff() { f.backoffFor(f.m.cfg.FetchBackoff) }

// leaderNotReadyBackoff is how long a follower waits before asking again a
// leader that does not know yet that it leads (it applies the same
// metadata record a moment later): much less than replica.fetch.backoff.ms,
// which would add a second to every failover.
const leaderNotReadyBackoff = 20 * time.Millisecond

// leaderNotReady reports whether err is a leader's answer that its
// metadata is behind the follower's: it is not the leader yet, or does not
// know the follower's leader epoch yet.
func leaderNotReady(err error) bool {
	return errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.UnknownLeaderEpoch)
}

func (f *fetcher) backoffFor(d time.Duration) {
	d = min(d, f.m.cfg.FetchBackoff)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-f.wake:
	case <-f.ctx.Done():
	}
}

// truncate makes the follower's log agree with the leader's before
// fetching in a new epoch (KIP-101/279).
func (f *fetcher) truncate(st *fetchState) error {
	p := st.p
	for {
		eps := p.Log.LeaderEpochs()
		if len(eps) == 0 {
			// Nothing of any epoch: only what lies before the log start.
			st.truncated = true
			return nil
		}
		latest := eps[len(eps)-1].Epoch
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = f.m.cfg.NodeID
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = p.Topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition = p.Index
		rp.CurrentLeaderEpoch = st.leaderEpoch
		rp.LeaderEpoch = latest
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		req.SetVersion(offsetForLeaderEpochVersion)
		c, err := f.leader()
		if err != nil {
			return err
		}
		resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
		if err := c.roundTrip(req, resp, time.Now().Add(f.m.cfg.SocketTimeout)); err != nil {
			f.dropConn()
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return errors.New("malformed OffsetForLeaderEpoch response")
		}
		r := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err
		}
		leo := p.Log.LogEndOffset()
		switch {
		case r.LeaderEpoch == -1 || r.EndOffset == -1:
			// The leader knows nothing at or before our epoch: keep only
			// what precedes our oldest epoch... Kafka truncates to the
			// leader's answer; with no answer, start over from its log.
			if err := p.Log.TruncateTo(p.Log.LogStartOffset()); err != nil {
				return err
			}
		case r.LeaderEpoch == latest:
			if r.EndOffset < leo {
				if err := p.Log.TruncateTo(r.EndOffset); err != nil {
					return err
				}
			}
		default:
			// The leader's answer is for an earlier epoch: truncate to the
			// smaller of its end offset and where that epoch ends here.
			_, localEnd := p.Log.EndOffsetForEpoch(r.LeaderEpoch)
			target := min(r.EndOffset, leo)
			if localEnd >= 0 {
				target = min(target, localEnd)
			}
			if target < leo {
				if err := p.Log.TruncateTo(target); err != nil {
					return err
				}
			}
		}
		st.truncated = true
		return nil
	}
}

// Versions of the requests a fetcher sends. Fetch v18 carries the
// follower's high watermark (KIP-1166), so the leader answers a parked
// fetch when the follower has a high watermark to learn.
const (
	fetchVersion                = 18
	offsetForLeaderEpochVersion = 4
)

// fetchedPartition is one partition of a Fetch response; records is a
// slice of the connection's response buffer, valid until the next fetch.
type fetchedPartition struct {
	topicID       [16]byte
	topic         string // before v13
	partition     int32
	errorCode     int16
	highWatermark int64
	logStart      int64
	records       []byte
}

// fetch sends one Fetch as a replica for parts (sorted, as snapshot gives
// them) and appends what comes back.
// Bytes received for the throttled ones are recorded in the quota.
func (f *fetcher) fetch(parts []*fetchState, throttled map[*fetchState]bool) error {
	cfg := f.m.cfg
	version := int16(fetchVersion)
	for _, st := range parts {
		if st.p.TopicID == ([16]byte{}) {
			// A topic without an id (not from a KRaft image) is named:
			// Fetch v12, the last version with topic names.
			version = 12
		}
	}
	c, err := f.leader()
	if err != nil {
		return err
	}
	sessionID, epoch := f.sess.plan(parts, version < 13) // parts are sorted (snapshot)
	err = c.sendWith(kmsg.Fetch.Int16(), version, true, time.Now().Add(cfg.SocketTimeout+cfg.FetchWaitMax),
		func(dst []byte) []byte { return f.appendFetchRequest(dst, version, sessionID, epoch) })
	if err != nil {
		f.sess.reset()
		return err
	}
	body, err := c.receive(true)
	if err != nil {
		f.sess.reset()
		return err
	}
	code, respID, got, err := parseFetchResponse(body, version, f.got[:0])
	f.got = got[:0]
	if err != nil {
		f.sess.reset()
		return err
	}
	if f.sess.answered(sessionID, epoch, code, respID) {
		// The leader restarted or evicted the session: fetch again at
		// once, in full.
		f.m.log.Debug("replica fetch session dropped", "leader", f.key.leader, "err", kerr.ErrorForCode(code))
		return nil
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return err
	}
	clear(f.byKey)
	for _, st := range parts {
		f.byKey[partKey{st.p.TopicID, st.p.Index}] = st
	}
	var backoff, soon bool
	for i := range got {
		rp := &got[i]
		id := rp.topicID
		if version < 13 {
			id = [16]byte{}
			for _, st := range parts {
				if st.p.Topic == rp.topic {
					id = st.p.TopicID
					break
				}
			}
		}
		st := f.byKey[partKey{id, rp.partition}]
		if st == nil || !f.still(st) {
			continue
		}
		if q := f.m.quota.get(); q != nil && throttled[st] {
			q.Record(int64(len(rp.records)))
		}
		if err := f.handlePartition(st, rp); err != nil {
			if leaderNotReady(err) {
				soon = true
			} else {
				backoff = true
			}
			f.m.log.Debug("replica fetch partition", "partition", st.p.String(), "err", err)
		}
	}
	switch {
	case backoff:
		f.backoff()
	case soon:
		f.backoffFor(leaderNotReadyBackoff)
	}
	return nil
}

// sortFetchStates sorts parts by topic, so that a request lists each
// topic once.
func sortFetchStates(parts []*fetchState) {
	slices.SortFunc(parts, func(a, b *fetchState) int {
		if c := bytes.Compare(a.p.TopicID[:], b.p.TopicID[:]); c != 0 {
			return c
		}
		if c := strings.Compare(a.p.Topic, b.p.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.p.Index, b.p.Index)
	})
}

// appendFetchRequest appends the body of a Fetch request at version (18,
// or 12 to name topics that have no id) to dst, as this broker's replica,
// in the session sessionID at epoch: the partitions of f.sess.list, each
// from its log end offset and with the high watermark it knows, and
// f.sess.forget as forgotten. It allocates nothing (kmsg's encoder
// allocates for each partition's tagged fields).
func (f *fetcher) appendFetchRequest(dst []byte, version int16, sessionID, epoch int32) []byte {
	cfg := f.m.cfg
	parts := f.sess.list
	if version < 15 {
		dst = kbin.AppendInt32(dst, cfg.NodeID) // replica id
	}
	dst = kbin.AppendInt32(dst, int32(cfg.FetchWaitMax/time.Millisecond))
	dst = kbin.AppendInt32(dst, cfg.FetchMinBytes)
	dst = kbin.AppendInt32(dst, cfg.FetchResponseMax)
	dst = kbin.AppendInt8(dst, 0) // isolation level
	dst = kbin.AppendInt32(dst, sessionID)
	dst = kbin.AppendInt32(dst, epoch)
	sameTopic := func(a, b listedFetch) bool { return a.st.p.TopicID == b.st.p.TopicID && a.st.p.Topic == b.st.p.Topic }
	topics := 0
	for i, lf := range parts {
		if i == 0 || !sameTopic(parts[i-1], lf) {
			topics++
		}
	}
	dst = kbin.AppendCompactArrayLen(dst, topics)
	for i := 0; i < len(parts); {
		run := i + 1
		for run < len(parts) && sameTopic(parts[i], parts[run]) {
			run++
		}
		if version >= 13 {
			dst = kbin.AppendUuid(dst, parts[i].st.p.TopicID)
		} else {
			dst = kbin.AppendCompactString(dst, parts[i].st.p.Topic)
		}
		dst = kbin.AppendCompactArrayLen(dst, run-i)
		for _, lf := range parts[i:run] {
			dst = kbin.AppendInt32(dst, lf.st.p.Index)
			dst = kbin.AppendInt32(dst, lf.leaderEpoch)
			dst = kbin.AppendInt64(dst, lf.fetchOffset)
			dst = kbin.AppendInt32(dst, -1) // last fetched epoch
			dst = kbin.AppendInt64(dst, lf.logStart)
			dst = kbin.AppendInt32(dst, cfg.FetchMaxBytes)
			// One tagged field: 1, the high watermark this replica knows.
			dst = append(dst, 1, 1, 8)
			dst = kbin.AppendInt64(dst, lf.highWatermark)
		}
		dst = append(dst, 0) // topic tagged fields
		i = run
	}
	dst = f.sess.appendForgotten(dst)
	dst = kbin.AppendCompactString(dst, "") // rack
	if version < 15 {
		return append(dst, 0) // no tagged fields
	}
	// One tagged field: 1, ReplicaState (KIP-903): replica id and broker
	// epoch (unknown here), and its own empty tagged fields.
	dst = append(dst, 1, 1, 4+8+1)
	dst = kbin.AppendInt32(dst, cfg.NodeID)
	dst = kbin.AppendInt64(dst, -1)
	return append(dst, 0)
}

// parseFetchResponse reads a flexible (v12+) Fetch response body into out,
// without copying record data, and returns the top-level error code.
func parseFetchResponse(body []byte, version int16, out []fetchedPartition) (code int16, sessionID int32, _ []fetchedPartition, _ error) {
	r := kbin.Reader{Src: body}
	r.Int32() // throttle time
	code = r.Int16()
	sessionID = r.Int32()
	for nt := r.CompactArrayLen(); nt > 0 && r.Ok(); nt-- {
		var (
			id   [16]byte
			name string
		)
		if version >= 13 {
			id = r.Uuid()
		} else {
			name = r.UnsafeCompactString()
		}
		for np := r.CompactArrayLen(); np > 0 && r.Ok(); np-- {
			p := fetchedPartition{topicID: id, topic: name}
			p.partition = r.Int32()
			p.errorCode = r.Int16()
			p.highWatermark = r.Int64()
			r.Int64() // last stable offset
			p.logStart = r.Int64()
			for na := r.CompactArrayLen(); na > 0 && r.Ok(); na-- {
				r.Int64() // producer id
				r.Int64() // first offset
				skipTags(&r)
			}
			r.Int32() // preferred read replica
			p.records = r.CompactNullableBytes()
			skipTags(&r)
			out = append(out, p)
		}
		skipTags(&r)
	}
	skipTags(&r)
	if !r.Ok() {
		return 0, 0, out, errors.New("malformed Fetch response")
	}
	return code, sessionID, out, nil
}

func (f *fetcher) handlePartition(st *fetchState, rp *fetchedPartition) error {
	p := st.p
	switch err := kerr.ErrorForCode(rp.errorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		// Our log end is outside the leader's log: below its start (it
		// deleted data) or, after an unclean election, above its end.
		if p.Log.LogEndOffset() < rp.logStart {
			return p.Log.TruncateTo(rp.logStart)
		}
		st.truncated = false
		return err
	case errors.Is(err, kerr.FencedLeaderEpoch), errors.Is(err, kerr.UnknownLeaderEpoch),
		errors.Is(err, kerr.NotLeaderForPartition):
		return err // wait for the metadata to move us
	default:
		return err
	}
	// The log end before and after the appends: where the leader's high
	// watermark usually is, so that following it needs no log search.
	before := p.Log.EndPosition()
	b := rp.records
	for len(b) > 0 {
		h, err := record.ParseHeader(b)
		if err != nil || h.Size() > int64(len(b)) {
			break // a partial batch at the end of a size-limited fetch
		}
		batch := b[:h.Size()]
		b = b[h.Size():]
		if h.LastOffset() < p.Log.LogEndOffset() {
			continue
		}
		// Like Kafka's follower: check the batch's CRC, not its records.
		if h.Magic != record.MagicV2 || record.ComputeCRC(batch) != h.CRC {
			return fmt.Errorf("batch at offset %d from leader %d: %w", h.BaseOffset, f.key.leader, record.ErrCorruptMessage)
		}
		if _, err := p.AppendAsFollower(batch); err != nil {
			if errors.Is(err, storage.ErrUnexpectedAppendOffset) {
				st.truncated = false
			}
			return err
		}
	}
	p.UpdateFollowerHighWatermark(rp.highWatermark, before, p.Log.EndPosition())
	// The leader's log start moved (DeleteRecords, retention): follow it,
	// as Kafka's fetcher does (maybeIncrementLogStartOffset), so records
	// deleted on the leader do not come back when this replica leads.
	if start := min(rp.logStart, p.Log.LogEndOffset()); start > p.Log.LogStartOffset() {
		if _, err := p.Log.DeleteRecordsBefore(start); err != nil {
			return fmt.Errorf("follow the leader's log start offset %d: %w", start, err)
		}
	}
	return nil
}
