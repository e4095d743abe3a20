package replication

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

// fetcher pulls from one leader for a set of partitions on one goroutine.
type fetcher struct {
	m      *Manager
	key    fetcherKey
	cl     *kgo.Client
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex // guards parts
	parts map[*partition.Partition]*fetchState
	wake  chan struct{}
}

func newFetcher(m *Manager, key fetcherKey) (*fetcher, error) {
	dialer := &net.Dialer{Timeout: m.cfg.SocketTimeout}
	rcvbuf := m.cfg.ReceiveBuffer
	tlsCfg := m.cfg.TLS
	opts := []kgo.Opt{
		kgo.SeedBrokers(key.addr),
		// replica.socket.receive.buffer.bytes (-1: the OS default).
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			dial := m.cfg.Dial
			if dial == nil {
				dial = dialer.DialContext
			}
			c, err := dial(ctx, network, host)
			if err != nil {
				return nil, err
			}
			if tc, ok := c.(interface{ SetReadBuffer(int) error }); ok && rcvbuf > 0 {
				_ = tc.SetReadBuffer(rcvbuf)
			}
			if tlsCfg == nil {
				return c, nil
			}
			cfg := tlsCfg.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName, _, _ = net.SplitHostPort(host)
			}
			tc := tls.Client(c, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return tc, nil
		}),
		kgo.ClientID("silkworm-replica-fetcher-" + strconv.Itoa(int(m.cfg.NodeID))),
		kgo.RequestTimeoutOverhead(m.cfg.SocketTimeout),
		kgo.DisableClientMetrics(),
	}
	if m.cfg.SASL != nil {
		opts = append(opts, kgo.SASL(m.cfg.SASL))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fetcher{m: m, key: key, cl: cl, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		parts: map[*partition.Partition]*fetchState{}, wake: make(chan struct{}, 1)}
	go f.run()
	return f, nil
}

func (f *fetcher) add(p *partition.Partition, epoch int32) {
	f.mu.Lock()
	st := f.parts[p]
	if st == nil || st.leaderEpoch != epoch {
		f.parts[p] = &fetchState{p: p, leaderEpoch: epoch}
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) remove(p *partition.Partition) {
	f.mu.Lock()
	delete(f.parts, p)
	f.mu.Unlock()
}

func (f *fetcher) close() {
	f.cancel()
	<-f.done
	f.cl.Close()
}

func (f *fetcher) snapshot() []*fetchState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*fetchState, 0, len(f.parts))
	for _, st := range f.parts {
		out = append(out, st)
	}
	return out
}

// still reports whether st is still the current state of its partition.
func (f *fetcher) still(st *fetchState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[st.p] == st
}

func (f *fetcher) run() {
	defer close(f.done)
	for f.ctx.Err() == nil {
		parts := f.snapshot()
		if len(parts) == 0 {
			select {
			case <-f.wake:
			case <-f.ctx.Done():
			}
			continue
		}
		var ready []*fetchState
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
		kresp, err := f.cl.Broker(int(f.key.leader)).Request(f.ctx, req)
		if err != nil {
			// The leader may be known only by its seed address.
			kresp, err = req.RequestWith(f.ctx, f.cl)
			if err != nil {
				return err
			}
		}
		resp := kresp.(*kmsg.OffsetForLeaderEpochResponse)
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

// fetch sends one Fetch as a replica and appends what comes back.
// Bytes received for the throttled ones are recorded in the quota.
func (f *fetcher) fetch(parts []*fetchState, throttled map[*fetchState]bool) error {
	cfg := f.m.cfg
	// franz-go sends the highest version both sides know, so the request
	// carries both topic names (v12-) and ids (v13+), and the replica id in
	// both places (v15+ moved it into ReplicaState).
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = cfg.NodeID
	req.ReplicaState.ID = cfg.NodeID
	req.MaxWaitMillis = int32(cfg.FetchWaitMax / time.Millisecond)
	req.MinBytes = cfg.FetchMinBytes
	req.MaxBytes = cfg.FetchResponseMax
	req.SessionEpoch = -1
	byTopic := map[string]int{}
	for _, st := range parts {
		i, ok := byTopic[st.p.Topic]
		if !ok {
			i = len(req.Topics)
			byTopic[st.p.Topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = st.p.Topic
			rt.TopicID = st.p.TopicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = st.p.Index
		rp.CurrentLeaderEpoch = st.leaderEpoch
		rp.FetchOffset = st.p.Log.LogEndOffset()
		rp.LogStartOffset = st.p.Log.LogStartOffset()
		rp.PartitionMaxBytes = cfg.FetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.m.cfg.SocketTimeout+f.m.cfg.FetchWaitMax)
	defer cancel()
	kresp, err := f.cl.Broker(int(f.key.leader)).Request(ctx, req)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	type key struct {
		id    [16]byte
		index int32
	}
	find := map[key]*fetchState{}
	names := map[string][16]byte{}
	for _, st := range parts {
		find[key{st.p.TopicID, st.p.Index}] = st
		names[st.p.Topic] = st.p.TopicID
	}
	var backoff, soon bool
	for _, rt := range resp.Topics {
		id := rt.TopicID
		if id == ([16]byte{}) {
			id = names[rt.Topic]
		}
		for _, rp := range rt.Partitions {
			st := find[key{id, rp.Partition}]
			if st == nil || !f.still(st) {
				continue
			}
			if q := f.m.quota.get(); q != nil && throttled[st] {
				q.Record(int64(len(rp.RecordBatches)))
			}
			if err := f.handlePartition(st, &rp); err != nil {
				if leaderNotReady(err) {
					soon = true
				} else {
					backoff = true
				}
				f.m.log.Debug("replica fetch partition", "partition", st.p.String(), "err", err)
			}
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

func (f *fetcher) handlePartition(st *fetchState, rp *kmsg.FetchResponseTopicPartition) error {
	p := st.p
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		// Our log end is outside the leader's log: below its start (it
		// deleted data) or, after an unclean election, above its end.
		if p.Log.LogEndOffset() < rp.LogStartOffset {
			return p.Log.TruncateTo(rp.LogStartOffset)
		}
		st.truncated = false
		return err
	case errors.Is(err, kerr.FencedLeaderEpoch), errors.Is(err, kerr.UnknownLeaderEpoch),
		errors.Is(err, kerr.NotLeaderForPartition):
		return err // wait for the metadata to move us
	default:
		return err
	}
	b := rp.RecordBatches
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
	p.UpdateFollowerHighWatermark(rp.HighWatermark)
	// The leader's log start moved (DeleteRecords, retention): follow it,
	// as Kafka's fetcher does (maybeIncrementLogStartOffset), so records
	// deleted on the leader do not come back when this replica leads.
	if start := min(rp.LogStartOffset, p.Log.LogEndOffset()); start > p.Log.LogStartOffset() {
		if _, err := p.Log.DeleteRecordsBefore(start); err != nil {
			return fmt.Errorf("follow the leader's log start offset %d: %w", start, err)
		}
	}
	return nil
}
