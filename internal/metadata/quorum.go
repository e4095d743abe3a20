package metadata

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/silkworm/silkworm/internal/security/acl"
)

// QuorumConfig configures a Quorum node.
type QuorumConfig struct {
	// NodeID is node.id.
	NodeID int32
	// Voters is controller.quorum.voters: node id to controller listener
	// address (host:port) of every controller. See ParseVoters.
	Voters map[int32]string
	// Dir holds the metadata log (raft.db) and snapshots, e.g.
	// <log.dir>/__cluster_metadata-0.
	Dir string
	// Bind is the address the controller listener binds (host:port). Every
	// node has one: voters and non-voters alike receive Raft traffic on it.
	Bind string
	// Listener, if set, is used instead of binding Bind (tests bind port 0
	// first to learn the voters' addresses).
	Listener net.Listener
	// TLS, when set, makes the controller listener serve TLS (the
	// controller listener's SSL or SASL_SSL protocol); with
	// ClientAuth RequireAndVerifyClientCert only nodes holding a
	// certificate the truststore trusts can join.
	TLS *tls.Config
	// DialTLS, when set, is how this node dials the others' controller
	// listeners (its certificate and the trusted CAs).
	DialTLS *tls.Config
	// AcceptAuth, when set, authenticates every connection the controller
	// listener accepts, after TLS and before anything else is read (SASL
	// on a SASL_PLAINTEXT or SASL_SSL controller listener); an error
	// closes the connection. DialAuth is the dialing side of the same
	// exchange. They run on the connection's goroutine.
	AcceptAuth func(net.Conn) error
	DialAuth   func(net.Conn) error
	// Dial, when set, opens the TCP connections to other nodes instead of
	// the real network (embedded clusters inject network faults with it;
	// Listener is the accepting side).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Advertised is this node's controller address as others reach it. It
	// defaults to Voters[NodeID] on a controller and to the listener's
	// address on a broker-only node.
	Advertised string
	// IsController is true when process.roles contains controller; such a
	// node must be in Voters.
	IsController bool
	// BrokerSessionTimeout is broker.session.timeout.ms: a broker without
	// heartbeat for this long is fenced.
	BrokerSessionTimeout time.Duration
	// HeartbeatInterval is broker.heartbeat.interval.ms.
	HeartbeatInterval time.Duration
	// RequestTimeout bounds how long a change waits for a controller
	// (retrying while none is known) and for its commit.
	RequestTimeout time.Duration
	// ElectionTimeout is the Raft heartbeat and election timeout.
	ElectionTimeout time.Duration
	// SnapshotThreshold is how many log entries since the last snapshot
	// trigger a new one.
	SnapshotThreshold uint64
	// ClusterID is the cluster id a new cluster starts with; empty means
	// FormattedClusterID, and when that is empty too the first controller
	// makes one up.
	ClusterID string
	// FormattedClusterID is the id `storage format` wrote in this node's
	// log dirs (meta.properties). Unlike ClusterID it is not put in the
	// image before the controller announces it: the first controller of a
	// new cluster announces it, as a KRaft controller bootstraps the
	// cluster with the id of its formatted directory.
	FormattedClusterID string
	// Logger receives the quorum's and Raft's logs; nil means slog.Default.
	Logger *slog.Logger
}

// commitTimeout is how long the Raft leader, with nothing new to append,
// waits (up to twice that, randomised) before it sends each follower an
// AppendEntries anyway, which tells it the commit index. applyRecord
// sends one at once after each record (a barrier), so this only bounds
// how late a follower learns of the barrier itself. Every such message
// wakes three processes on an idle cluster; Raft's own heartbeats (every
// tenth of the election timeout) keep the leadership.
const commitTimeout = 250 * time.Millisecond

// DefaultQuorumConfig returns Kafka's defaults: broker.session.timeout.ms
// 9000 and broker.heartbeat.interval.ms 2000.
func DefaultQuorumConfig() QuorumConfig {
	return QuorumConfig{
		BrokerSessionTimeout: 9 * time.Second,
		HeartbeatInterval:    2 * time.Second,
		RequestTimeout:       10 * time.Second,
		ElectionTimeout:      time.Second,
		SnapshotThreshold:    8192,
	}
}

// Validate checks the config.
func (c *QuorumConfig) Validate() error {
	switch {
	case c.NodeID < 0:
		return fmt.Errorf("node.id %d must not be negative", c.NodeID)
	case len(c.Voters) == 0:
		return errors.New("controller.quorum.voters is empty")
	case c.Dir == "":
		return errors.New("metadata log dir is empty")
	case c.Bind == "" && c.Listener == nil:
		return errors.New("no controller listener address")
	case c.BrokerSessionTimeout <= 0 || c.HeartbeatInterval <= 0 || c.RequestTimeout <= 0 || c.ElectionTimeout <= 0:
		return errors.New("broker session timeout, heartbeat interval, request and election timeouts must be positive")
	case c.HeartbeatInterval >= c.BrokerSessionTimeout:
		return fmt.Errorf("broker.heartbeat.interval.ms (%v) must be less than broker.session.timeout.ms (%v)",
			c.HeartbeatInterval, c.BrokerSessionTimeout)
	}
	_, voter := c.Voters[c.NodeID]
	if c.IsController && !voter {
		return fmt.Errorf("node %d has the controller role but is not in controller.quorum.voters", c.NodeID)
	}
	if !c.IsController && voter {
		return fmt.Errorf("node %d is in controller.quorum.voters but has no controller role", c.NodeID)
	}
	for id, addr := range c.Voters {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("controller.quorum.voters: node %d: %w", id, err)
		}
	}
	return nil
}

// ParseVoters parses controller.quorum.voters ("1@host:9093,2@host:9094").
func ParseVoters(s string) (map[int32]string, error) {
	out := map[int32]string{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		idStr, addr, ok := strings.Cut(v, "@")
		id, err := strconv.ParseInt(idStr, 10, 32)
		if !ok || err != nil || id < 0 {
			return nil, fmt.Errorf("controller.quorum.voters: %q is not id@host:port", v)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("controller.quorum.voters: %q: %w", v, err)
		}
		if _, dup := out[int32(id)]; dup {
			return nil, fmt.Errorf("controller.quorum.voters: node %d listed twice", id)
		}
		out[int32(id)] = addr
	}
	if len(out) == 0 {
		return nil, errors.New("controller.quorum.voters is empty")
	}
	return out, nil
}

// Quorum is a metadata store replicated with Raft (hashicorp/raft) among
// the controllers, with broker-only nodes as non-voters. Every node
// applies the same records in the same order and publishes the same
// Images; changes asked on any node are forwarded to the active controller
// (the Raft leader). Safe for concurrent use.
type Quorum struct {
	cfg  QuorumConfig
	log  *slog.Logger
	ctrl *controller

	raft      *raft.Raft
	transport *raft.NetworkTransport
	tracker   *trackingTransport // transport, recording followers' progress (quorumstatus.go)
	mux       *mux
	bolt      *raftboltdb.BoltStore

	image  atomic.Pointer[Image]
	active atomic.Bool // this node is leader and announced itself

	mu        sync.Mutex // serialises publishing and guards listeners
	listeners []func(*Image)

	// selfMu guards self and heartbeating.
	selfMu       sync.Mutex
	self         *Broker
	heartbeating bool
	incarnation  string
	// hurried is set while the Raft heartbeat timeout is shortened
	// because the controller's process died (session.go).
	hurried atomic.Bool

	// hintMu guards hint.
	hintMu sync.Mutex
	hint   string // a leader address learnt from a forwarding answer

	started   chan struct{} // closed once raft is set
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// OpenQuorum opens (or creates) the metadata log in cfg.Dir, starts the
// controller listener and Raft. On a fresh controller dir it bootstraps
// the cluster with the static voter set (every voter does the same, which
// Raft accepts). A broker-only node starts empty and is added as a
// non-voter by the active controller when it registers (SetSelf or
// RegisterBroker). The Image is empty until the log is replayed; poll
// Image or use Subscribe.
func OpenQuorum(cfg QuorumConfig) (*Quorum, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("node.id", cfg.NodeID)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("metadata log dir %s: %w", cfg.Dir, err)
	}
	q := &Quorum{cfg: cfg, log: log, stop: make(chan struct{}), started: make(chan struct{}), incarnation: NewTopicID().String()}
	q.ctrl = newController(q)
	q.image.Store(&Image{ClusterID: cfg.ClusterID, ControllerID: -1, Topics: map[string]*Topic{}})

	hl := newHCLogger(log)
	var err error
	q.bolt, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.Dir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open metadata log %s: %w", cfg.Dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hl)
	if err != nil {
		q.bolt.Close()
		return nil, fmt.Errorf("open metadata snapshots %s: %w", cfg.Dir, err)
	}
	ln := cfg.Listener
	if ln == nil {
		ln, err = net.Listen("tcp", cfg.Bind)
		if err != nil {
			q.bolt.Close()
			return nil, fmt.Errorf("controller listener %s: %w", cfg.Bind, err)
		}
	}
	advertise := cfg.Advertised
	if advertise == "" {
		advertise = cfg.Voters[cfg.NodeID]
	}
	if advertise == "" {
		advertise = ln.Addr().String()
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	q.mux = newMux(ln, advertise, q.serveForward, q.spawn)
	q.mux.session = q.serveSession
	q.mux.dialTLS = cfg.DialTLS
	q.mux.acceptAuth, q.mux.dialAuth, q.mux.dialNet = cfg.AcceptAuth, cfg.DialAuth, cfg.Dial
	q.spawn(q.mux.acceptLoop)
	q.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: q.mux, MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})

	rc := raft.DefaultConfig()
	rc.LocalID = serverID(cfg.NodeID)
	rc.HeartbeatTimeout = cfg.ElectionTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = leaderLease(cfg.ElectionTimeout)
	rc.CommitTimeout = commitTimeout
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.Logger = hl
	notify := make(chan bool, 8)
	rc.NotifyCh = notify

	hasState, err := raft.HasExistingState(q.bolt, q.bolt, snaps)
	if err != nil {
		q.closeStores()
		return nil, fmt.Errorf("read metadata log: %w", err)
	}
	q.tracker = newTrackingTransport(q.transport, q.raftLastIndex)
	q.raft, err = raft.NewRaft(rc, &fsm{q: q}, q.bolt, q.bolt, snaps, q.tracker)
	if err != nil {
		q.closeStores()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	close(q.started)
	if cfg.IsController && !hasState {
		var servers []raft.Server
		for _, id := range slices.Sorted(maps.Keys(cfg.Voters)) {
			servers = append(servers, raft.Server{ID: serverID(id), Address: raft.ServerAddress(cfg.Voters[id])})
		}
		err := q.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
		if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			q.Close()
			return nil, fmt.Errorf("bootstrap metadata quorum: %w", err)
		}
	}
	q.spawn(func() { q.watchLeadership(notify) })
	return q, nil
}

// leaderLease is the Raft leader lease for an election timeout.
func leaderLease(election time.Duration) time.Duration { return election / 2 }

func serverID(id int32) raft.ServerID { return raft.ServerID(strconv.Itoa(int(id))) }

// spawn starts a goroutine that Close waits for.
func (q *Quorum) spawn(fn func()) {
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		fn()
	}()
}

// watchLeadership runs the controller while this node leads.
func (q *Quorum) watchLeadership(notify <-chan bool) {
	var stopLeading func()
	defer func() {
		if stopLeading != nil {
			stopLeading()
		}
	}()
	for {
		select {
		case <-q.stop:
			return
		case leader := <-notify:
			if stopLeading != nil {
				stopLeading()
				stopLeading = nil
			}
			if leader {
				stopLeading = q.startLeading()
			}
		}
	}
}

// startLeading runs the controller in a goroutine; the returned function
// stops it and waits for it.
func (q *Quorum) startLeading() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	q.spawn(func() {
		defer close(done)
		q.ctrl.lead(ctx)
	})
	return func() {
		cancel()
		<-done
	}
}

// Close stops this node: heartbeats, the controller, Raft, the listener
// and the log. It does not hand leadership over first (a stopped leader
// is replaced after ElectionTimeout). Safe to call more than once.
func (q *Quorum) Close() error {
	var err error
	q.closeOnce.Do(func() {
		close(q.stop)
		if q.raft != nil {
			err = q.raft.Shutdown().Error()
		}
		if q.transport != nil {
			q.transport.Close()
		}
		q.wg.Wait()
		q.closeStores()
	})
	return err
}

func (q *Quorum) closeStores() {
	if q.mux != nil {
		q.mux.Close()
	}
	if q.bolt != nil {
		q.bolt.Close()
	}
}

// publish makes im the current image and calls the subscribers. Called
// from Raft's FSM goroutine (and once by OpenQuorum).
func (q *Quorum) publish(im *Image) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.image.Store(im)
	for _, fn := range q.listeners {
		fn(im)
	}
}

// Image returns the latest image applied on this node. It never blocks.
func (q *Quorum) Image() *Image { return q.image.Load() }

// Subscribe registers fn to be called with the current image at once and
// then with every new image, in apply order, from the Raft apply
// goroutine. fn must not call the Quorum's change methods (it would wait
// for itself); it may call Image.
func (q *Quorum) Subscribe(fn func(*Image)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.listeners = append(q.listeners, fn)
	fn(q.image.Load())
}

// NodeID is this node's id.
func (q *Quorum) NodeID() int32 { return q.cfg.NodeID }

// Leader returns the Raft leader's node id, if one is known.
func (q *Quorum) Leader() (int32, bool) {
	_, id := q.raft.LeaderWithID()
	if id == "" {
		return -1, false
	}
	n, err := strconv.ParseInt(string(id), 10, 32)
	if err != nil {
		return -1, false
	}
	return int32(n), true
}

// IsActiveController reports whether this node is the Raft leader and
// serves controller requests.
func (q *Quorum) IsActiveController() bool {
	return q.raft.State() == raft.Leader && q.active.Load()
}

// Snapshot writes a snapshot of the current image now and truncates the
// log before it (Raft also does so every SnapshotThreshold entries).
func (q *Quorum) Snapshot() error {
	if err := q.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("metadata snapshot: %w", err)
	}
	return nil
}

// applyRecord appends r on this node, which must be the leader, and waits
// until it is applied here. The error is the record's validation error,
// or ErrNotController when leadership was lost.
func (q *Quorum) applyRecord(r *record) (any, error) {
	b, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	f := q.raft.Apply(b, q.cfg.RequestTimeout)
	// hashicorp/raft drops a future whose entry was committed but not yet
	// applied when it shuts down: its Error never returns. Close must not
	// wait for it, so the wait ends with Close too; the goroutine left
	// waiting on such a future is that library's (embed's leak check
	// knows it).
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err = <-done:
	case <-q.stop:
		return nil, fmt.Errorf("append %s record: %w: the metadata quorum is closing", r.Type, ErrNotController)
	}
	if err != nil {
		return nil, fmt.Errorf("append %s record: %w", r.Type, notControllerIfLost(err))
	}
	// The record is committed, but the other nodes apply it only once an
	// AppendEntries tells them so, and with nothing more to append Raft
	// sends the next one after CommitTimeout. A barrier entry goes out now
	// and carries the commit index. Nothing waits for the barrier itself.
	q.raft.Barrier(0)
	res, _ := f.Response().(applyResult)
	return res.val, res.err
}

// notControllerIfLost maps Raft's leadership errors to ErrNotController.
func notControllerIfLost(err error) error {
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
		errors.Is(err, raft.ErrLeadershipTransferInProgress) || errors.Is(err, raft.ErrEnqueueTimeout) {
		return fmt.Errorf("%w: %w", ErrNotController, err)
	}
	return err
}

// do runs req on the active controller: here if this node is it,
// otherwise forwarded. While no controller answers it retries until
// RequestTimeout, then returns an error wrapping ErrNotController. It
// returns either a local value or the JSON of a remote one.
func (q *Quorum) do(req *request) (any, json.RawMessage, error) {
	deadline := time.Now().Add(q.cfg.RequestTimeout)
	voters := slices.Sorted(maps.Keys(q.cfg.Voters))
	next := 0
	for {
		var err error
		if q.raft.State() == raft.Leader {
			var v any
			v, err = q.ctrl.handle(req)
			if err == nil || !errors.Is(err, ErrNotController) {
				return v, nil, err
			}
		} else {
			addr := q.leaderAddr()
			if addr == "" {
				// No leader known (a broker-only node before it joined):
				// ask the voters in turn.
				addr = q.cfg.Voters[voters[next%len(voters)]]
				next++
			}
			var resp *response
			resp, err = q.mux.forward(addr, req, time.Until(deadline)+time.Second)
			if err == nil {
				if resp.Code == "" {
					return nil, resp.Result, nil
				}
				err = decodeError(resp.Code, resp.Msg)
				if !errors.Is(err, ErrNotController) {
					return nil, nil, err
				}
				q.setHint(resp.Leader, addr)
			} else {
				q.setHint("", addr)
				err = fmt.Errorf("%w: %w", ErrNotController, err)
			}
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("metadata %s: %w", req.Op, err)
		}
		select {
		case <-q.stop:
			return nil, nil, fmt.Errorf("metadata %s: %w: node closed", req.Op, ErrNotController)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (q *Quorum) leaderAddr() string {
	if addr, _ := q.raft.LeaderWithID(); addr != "" {
		return string(addr)
	}
	q.hintMu.Lock()
	defer q.hintMu.Unlock()
	return q.hint
}

// setHint remembers a leader address learnt from an answer, or forgets
// the hint when it pointed at failed.
func (q *Quorum) setHint(leader, failed string) {
	q.hintMu.Lock()
	defer q.hintMu.Unlock()
	switch {
	case leader != "":
		q.hint = leader
	case q.hint == failed:
		q.hint = ""
	}
}

// call runs req and decodes its result as T.
func call[T any](q *Quorum, req *request) (T, error) {
	var zero T
	v, raw, err := q.do(req)
	if err != nil {
		return zero, err
	}
	if raw != nil {
		var out T
		if err := json.Unmarshal(raw, &out); err != nil {
			return zero, fmt.Errorf("metadata %s: decode answer: %w", req.Op, err)
		}
		return out, nil
	}
	if v == nil {
		return zero, nil
	}
	out, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("metadata %s: unexpected answer %T", req.Op, v)
	}
	return out, nil
}

// CreateTopic creates a topic, its replicas assigned by the controller
// across the unfenced brokers (see assignReplicas). It fails with
// ErrInvalidReplicas when replicationFactor exceeds the unfenced brokers.
func (q *Quorum) CreateTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) (*Topic, error) {
	return call[*Topic](q, &request{Op: opCreateTopic, Name: name, Partitions: partitions, RF: replicationFactor, Configs: configs})
}

// CreateTopicWithAssignment creates a topic with the replicas of each
// partition exactly as assignment lists them; see Store.
func (q *Quorum) CreateTopicWithAssignment(name string, assignment [][]int32, configs map[string]string) (*Topic, error) {
	return call[*Topic](q, &request{Op: opCreateTopic, Name: name, Assignment: assignment, Configs: configs})
}

// DeleteTopic removes a topic.
func (q *Quorum) DeleteTopic(name string) error {
	_, err := call[any](q, &request{Op: opDeleteTopic, Name: name})
	return err
}

// CreatePartitions grows a topic to count partitions, the new ones with
// the replication factor of partition 0.
func (q *Quorum) CreatePartitions(name string, count int32) error {
	_, err := call[any](q, &request{Op: opCreatePartitions, Name: name, Count: int64(count)})
	return err
}

// CreatePartitionsWithAssignment grows a topic to count partitions, new
// partition i (counting from the current count) with exactly the replicas
// assignment[i]; see Store.
func (q *Quorum) CreatePartitionsWithAssignment(name string, count int32, assignment [][]int32) error {
	_, err := call[any](q, &request{Op: opCreatePartitions, Name: name, Count: int64(count), Assignment: assignment})
	return err
}

// SetTopicConfigs replaces a topic's config overrides.
func (q *Quorum) SetTopicConfigs(name string, configs map[string]string) error {
	_, err := call[any](q, &request{Op: opSetTopicConfigs, Name: name, Configs: configs})
	return err
}

// SetBrokerConfigs replaces the cluster-wide dynamic broker config
// overrides.
func (q *Quorum) SetBrokerConfigs(configs map[string]string) error {
	_, err := call[any](q, &request{Op: opSetBrokerConfigs, Configs: configs})
	return err
}

// AllocateProducerIDs reserves n producer ids and returns the first.
func (q *Quorum) AllocateProducerIDs(n int64) (int64, error) {
	return call[int64](q, &request{Op: opAllocateProducers, Count: n})
}

// AlterScramCredentials applies changes in order, in one record, and
// returns one error per change: nil when applied, ErrResourceNotFound when
// it deletes a credential that does not exist. Like every security change
// it returns once every reachable node has applied it.
func (q *Quorum) AlterScramCredentials(changes []ScramChange) ([]error, error) {
	if len(changes) == 0 {
		return []error{}, nil
	}
	errs, err := call[changeErrors](q, &request{Op: opAlterScram, Scram: changes})
	if err != nil {
		return nil, err
	}
	if len(errs) != len(changes) {
		return nil, fmt.Errorf("metadata %s: %d results for %d changes", opAlterScram, len(errs), len(changes))
	}
	return errs, nil
}

// CreateACLs adds bindings, in one record; one already present is not
// duplicated. A binding with an enum value that cannot be stored fails the
// call with ErrInvalidRequest.
func (q *Quorum) CreateACLs(bindings []acl.Binding) error {
	if err := checkBindings(bindings); err != nil {
		return err
	}
	if len(bindings) == 0 {
		return nil
	}
	_, err := call[any](q, &request{Op: opCreateACLs, ACLs: bindings})
	return err
}

// DeleteACLs removes exactly bindings, in one record; absent ones are
// ignored.
func (q *Quorum) DeleteACLs(bindings []acl.Binding) error {
	bindings = storableOnly(bindings)
	if len(bindings) == 0 {
		return nil
	}
	_, err := call[any](q, &request{Op: opDeleteACLs, ACLs: bindings})
	return err
}

// AlterClientQuotas applies changes in order, in one record; an entity
// left without values is removed. A NaN or infinite value fails the call
// with ErrInvalidRequest.
func (q *Quorum) AlterClientQuotas(changes []QuotaChange) error {
	if err := checkQuotaChanges(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	_, err := call[any](q, &request{Op: opAlterClientQuotas, Quotas: changes})
	return err
}

// RegisterBroker registers (or re-registers) broker b. A broker-only node
// passes its controller address as raftAddr so that the controller adds it
// to the Raft configuration as a non-voter; others pass "". A
// registration with a new Incarnation fences the old one; the broker stays
// fenced until its first Heartbeat.
func (q *Quorum) RegisterBroker(b Broker, raftAddr string) error {
	_, err := call[any](q, &request{Op: opRegisterBroker, Broker: &b, RaftAddr: raftAddr})
	return err
}

// Heartbeat tells the controller broker nodeID is alive; it unfences a
// fenced broker. Brokers call it every HeartbeatInterval (SetSelf does).
func (q *Quorum) Heartbeat(nodeID int32) error {
	_, err := call[any](q, &request{Op: opHeartbeat, NodeID: nodeID})
	return err
}

// ControlledShutdown moves leadership and ISR membership away from broker
// nodeID, which then leads nothing until it registers again. A broker
// calls it before it stops.
func (q *Quorum) ControlledShutdown(nodeID int32) error {
	_, err := call[any](q, &request{Op: opControlledShutdown, NodeID: nodeID})
	return err
}

// UnregisterBroker removes broker nodeID's registration, as Kafka's
// UnregisterBroker: ErrBrokerNotRegistered for an unknown id. A running
// broker is not refused (as in Kafka): it registers again at its next
// heartbeat.
func (q *Quorum) UnregisterBroker(nodeID int32) error {
	_, err := call[any](q, &request{Op: opUnregisterBroker, NodeID: nodeID})
	return err
}

// AlterPartition sets a partition's ISR on request of its leader
// (KIP-497). leaderEpoch and partitionEpoch must be current: an older
// leader epoch fails with ErrFencedLeaderEpoch, another partition epoch
// with ErrInvalidUpdateVersion; an ISR member that is not a live replica
// fails with ErrIneligibleReplica. It returns the partition as changed,
// its PartitionEpoch bumped. A reassignment completes here once every
// adding replica is in the ISR.
func (q *Quorum) AlterPartition(topic string, partition, leaderID, leaderEpoch, partitionEpoch int32, newISR []int32) (Partition, error) {
	return call[Partition](q, &request{Op: opAlterPartition, Alter: &alterPartitionRecord{
		Topic: topic, Partition: partition, LeaderID: leaderID, LeaderEpoch: leaderEpoch,
		PartitionEpoch: partitionEpoch, NewISR: newISR,
	}})
}

// ElectLeaders runs leader elections for partitions (nil: all). With
// preferred, the first replica becomes leader if it is live and in the
// ISR; otherwise (unclean), a partition without leader gets the first live
// replica even if it is not in the ISR. Per-partition outcomes are in the
// results.
func (q *Quorum) ElectLeaders(preferred bool, partitions []TopicPartition) ([]ElectionResult, error) {
	return call[[]ElectionResult](q, &request{Op: opElectLeaders, Elect: &electLeadersRecord{Preferred: preferred, Partitions: partitions}})
}

// ReassignPartitions starts reassignments (KIP-455), or cancels them for
// entries with nil Replicas.
func (q *Quorum) ReassignPartitions(rs []Reassignment) ([]ReassignmentResult, error) {
	return call[[]ReassignmentResult](q, &request{Op: opReassign, Reassign: rs})
}

// SetSelf registers this node as broker self (with this process's
// incarnation), sends a first heartbeat so that it is unfenced when SetSelf
// returns, and keeps heartbeating every HeartbeatInterval until Close.
// Calling it again updates the endpoints.
func (q *Quorum) SetSelf(self Broker) error {
	self.Incarnation = q.incarnation
	raftAddr := ""
	if !q.cfg.IsController {
		raftAddr = q.mux.advertise
	}
	if err := q.RegisterBroker(self, raftAddr); err != nil {
		return err
	}
	if err := q.Heartbeat(self.NodeID); err != nil {
		return err
	}
	// Act only once this node's own image holds this registration: until
	// then it may still show leaderships of the old incarnation that the
	// controller has already moved (Kafka keeps a broker fenced until its
	// metadata reaches its registration record).
	deadline := time.Now().Add(q.cfg.RequestTimeout)
	for {
		br := q.Image().BrokerByID(self.NodeID)
		if br != nil && br.Incarnation == q.incarnation && !br.Fenced {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("broker %d: registration not applied locally within %s", self.NodeID, q.cfg.RequestTimeout)
		}
		select {
		case <-q.stop:
			return fmt.Errorf("broker %d: %w: node closed", self.NodeID, ErrNotController)
		case <-time.After(10 * time.Millisecond):
		}
	}
	q.selfMu.Lock()
	defer q.selfMu.Unlock()
	q.self = &self
	if !q.heartbeating {
		q.heartbeating = true
		q.spawn(q.heartbeatLoop)
		q.spawn(q.sessionLoop)
	}
	return nil
}

func (q *Quorum) heartbeatLoop() {
	t := time.NewTicker(q.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-t.C:
		}
		q.selfMu.Lock()
		self := *q.self
		q.selfMu.Unlock()
		err := q.Heartbeat(self.NodeID)
		if errors.Is(err, ErrBrokerNotRegistered) {
			// Unregistered while running (UnregisterBroker): register again.
			raftAddr := ""
			if !q.cfg.IsController {
				raftAddr = q.mux.advertise
			}
			if err = q.RegisterBroker(self, raftAddr); err == nil {
				err = q.Heartbeat(self.NodeID)
			}
		}
		if err != nil {
			select {
			case <-q.stop:
				return
			default:
			}
			q.log.Warn("broker heartbeat", "err", err)
		}
	}
}
