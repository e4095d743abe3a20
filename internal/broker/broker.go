package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/group"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/replication"
	"github.com/silkworm/silkworm/internal/security/sasl"
	"github.com/silkworm/silkworm/internal/storage"
)

// Network is how a broker listens and reaches other nodes. The real
// network (net.Listen, net.Dialer) unless WithNetwork replaces it; an
// embedded cluster wraps it to cut links, add latency or drop connections.
// Its methods are called from many goroutines.
type Network interface {
	Listen(network, address string) (net.Listener, error)
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// WithStorageFS keeps the logs on fs instead of the operating system's
// file system (error-injecting and slow file systems for tests). The
// metadata store keeps its own files.
func WithStorageFS(fs storage.FS) Option {
	return func(b *Broker) { b.fs = fs }
}

// WithNetwork makes the broker listen and dial through n: its client and
// controller listeners, replica fetchers, transaction marker clients and
// metadata quorum connections.
func WithNetwork(n Network) Option {
	return func(b *Broker) { b.net = n }
}

// listen opens a listener through the broker's Network.
func (b *Broker) listen(address string) (net.Listener, error) {
	if b.net != nil {
		return b.net.Listen("tcp", address)
	}
	return net.Listen("tcp", address)
}

// dialFunc is the broker's Network dialer, nil for the real network.
func (b *Broker) dialFunc() func(ctx context.Context, network, address string) (net.Conn, error) {
	if b.net == nil {
		return nil
	}
	return b.net.DialContext
}

// topicState is what the broker keeps per topic: its id, resolved
// config, and local partition replicas.
type topicState struct {
	name       string
	id         metadata.TopicID
	cfg        config.Topic
	partitions []*partition.Partition
	metrics    *topicMetrics // BrokerTopicMetrics, kept across replacements (metrics.go)
}

// Broker is one Silkworm broker. Create it with New, run it with Start,
// stop it with Close. Safe for concurrent use.
type Broker struct {
	cfg    *config.Broker
	log    *slog.Logger
	logs   *storage.Manager
	meta   metadata.Store
	srv    *server
	nodeID int32

	// cluster is the Raft metadata quorum when controller.quorum.voters is
	// set (nil on a single node); repl and isr run only then (cluster.go).
	cluster   clusterStore
	repl      *replication.Manager
	isr       *isrManager
	rebalance *rebalancer // auto.leader.rebalance.enable (autorebalance.go)

	mu     sync.RWMutex // guards topics, and srv while Start sets it
	topics map[string]*topicState

	// failed is closed when every log dir has gone offline (Failed).
	failed     chan struct{}
	failedOnce sync.Once
	stopWatch  chan struct{}

	groups    *group.Coordinator    // consumer groups and committed offsets (groups.go)
	txns      *txnWiring            // transaction coordinator (txns.go)
	shares    *shareWiring          // share groups (shares.go)
	sessions  *fetchSessionCache    // KIP-227 fetch sessions (fetchsession.go)
	throttles *replicationThrottles // replication throttles (throttle.go)
	telemetry *clientMetrics        // KIP-714 client instances (gettelemetrysubscriptions.go)
	metrics   *brokerMetrics        // Prometheus registry and instruments (metrics.go)
	http      httpListeners         // metrics and console HTTP listeners (http.go)

	authz *authz // ACL authorizer and client quotas, fed from the image (security.go)
	// interBroker is how this broker reaches others (interbroker.go).
	interBroker interBrokerSecurity
	// controllerSec authenticates the controller listener (controllerauth.go).
	controllerSec *listenerSec
	plainAuth     sasl.PlainAuthenticator     // WithPlainAuthenticator; nil: JAAS users
	jaasFile      map[string][]sasl.JAASEntry // WithJAASFile: sections by name
	fs            storage.FS                  // WithStorageFS; the OS by default
	net           Network                     // WithNetwork; nil: the real network
	killed        atomic.Bool                 // Kill: stop without a controlled shutdown
	closeOnce     sync.Once                   // Close runs once (Start closes a broker it could not start)
	closeErr      error
	// failedAuth counts failed authentications (TLS handshakes, SASL).
	failedAuth atomic.Int64

	pidMu   sync.Mutex // guards pidNext and pidEnd
	pidNext int64
	pidEnd  int64
}

// New opens the log dirs (recovering logs after a crash) and the metadata
// store. It does not listen yet.
func New(cfg *config.Broker, log *slog.Logger, opts ...Option) (*Broker, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	b := &Broker{cfg: cfg, log: log, nodeID: cfg.NodeID, topics: map[string]*topicState{},
		failed: make(chan struct{}), stopWatch: make(chan struct{})}
	b.fs = storage.OSFS
	b.sessions = newFetchSessionCache(cfg.MaxIncrementalFetchSessionCacheSlots)
	b.telemetry = newClientMetrics()
	b.metrics = newBrokerMetrics(b)
	for _, o := range opts {
		o(b)
	}
	for _, d := range cfg.LogDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("log dir %s: %w", d, err)
		}
	}
	if err := resolveVoters(cfg, log); err != nil {
		return nil, err
	}
	self, err := b.selfRegistration()
	if err != nil {
		return nil, err
	}
	if b.authz, err = newAuthz(cfg); err != nil {
		return nil, err
	}
	// Brokers connect to each other only in a cluster.
	if l, ok := cfg.ListenerByName(cfg.InterBrokerListenerName); ok && isCluster(cfg) {
		if b.interBroker, err = newPeerSecurity(cfg, b.jaasFileEntry, l.Name, l.SecurityProtocol, "sasl.mechanism.inter.broker.protocol"); err != nil {
			return nil, err
		}
	}
	if isCluster(cfg) {
		q, err := b.openQuorum()
		if err != nil {
			return nil, err
		}
		b.meta, b.cluster = q, q
		// The cluster id comes from the controller; wait until it is known.
		deadline := time.Now().Add(2 * time.Minute)
		for q.Image().ClusterID == "" {
			if time.Now().After(deadline) {
				q.Close()
				return nil, errors.New("metadata quorum: no controller elected within 2 minutes; are the other controller.quorum.voters running?")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Act only on a current image: a restarted node replays history
		// first, in which its topics may not exist yet (and would look
		// like strays to delete) and it may lead at old epochs.
		if err := q.CatchUp(nil); err != nil {
			q.Close()
			return nil, fmt.Errorf("metadata quorum: catch up: %w", err)
		}
		b.repl = replication.NewManager(replicationConfig(cfg, b))
	} else {
		clusterID, err := b.clusterID()
		if err != nil {
			return nil, err
		}
		b.meta, err = metadata.OpenLocal(cfg.LogDirs[0], self, clusterID)
		if err != nil {
			return nil, err
		}
	}
	b.throttles = b.newReplicationThrottles()
	im := b.meta.Image()
	b.logs, err = storage.OpenManager(storage.ManagerConfig{
		Dirs:                              cfg.LogDirs,
		NodeID:                            cfg.NodeID,
		ClusterID:                         im.ClusterID,
		FS:                                b.fs,
		Clock:                             time.Now,
		RetentionCheckIntervalMs:          cfg.LogRetentionCheckIntervalMs,
		FlushCheckIntervalMs:              cfg.LogFlushSchedulerIntervalMs,
		RecoveryPointCheckpointIntervalMs: int64(cfg.LogFlushOffsetCheckpointIntervalMs),
		CleanerEnable:                     boolConfig(cfg, "log.cleaner.enable", true),
		CleanerThreads:                    int(intConfig(cfg, "log.cleaner.threads", 1)),
		CleanerBackoffMs:                  intConfig(cfg, "log.cleaner.backoff.ms", 15000),
		CleanerDedupeBufferSize:           intConfig(cfg, "log.cleaner.dedupe.buffer.size", 128<<20),
		MaxOpenSegmentFiles:               cfg.MaxOpenSegmentFiles,
		IndexCacheBytes:                   cfg.IndexCacheBytes,
		OnFlush:                           func(d time.Duration) { b.metrics.observeLogFlush(float64(d) / float64(time.Millisecond)) },
		Logger:                            log,
	}, b.storageConfigFor)
	if err != nil {
		return nil, err
	}
	var applyErr error
	b.meta.Subscribe(func(im *metadata.Image) {
		if err := b.applyImage(im); err != nil {
			applyErr = err
			b.log.Error("apply cluster metadata", "err", err)
		}
	})
	if applyErr != nil {
		b.logs.Close()
		return nil, applyErr
	}
	if err := b.startGroups(); err != nil {
		b.logs.Close()
		return nil, err
	}
	if err := b.startTxns(); err != nil {
		b.stopGroups()
		b.logs.Close()
		return nil, err
	}
	b.startShares()
	if b.cluster != nil {
		b.startISRManager(b.cluster)
	}
	b.startAutoRebalance()
	return b, nil
}

// selfRegistration is this broker's advertised endpoint.
func (b *Broker) selfRegistration() (metadata.Broker, error) {
	l := b.cfg.BrokerAdvertisedListeners()
	if len(l) == 0 {
		return metadata.Broker{}, errors.New("no listener configured")
	}
	reg := metadata.Broker{NodeID: b.cfg.NodeID, Host: l[0].Host, Port: int32(l[0].Port)}
	for _, al := range l {
		reg.Listeners = append(reg.Listeners, metadata.Endpoint{
			Name: al.Name, Host: al.Host, Port: int32(al.Port), SecurityProtocol: al.SecurityProtocol,
		})
	}
	if b.cfg.BrokerRack != "" {
		r := b.cfg.BrokerRack
		reg.Rack = &r
	}
	return reg, nil
}

// Start listens on every broker listener (all but the controller
// listeners, which the metadata quorum serves), registers the broker with
// each advertised endpoint, and serves until Close.
func (b *Broker) Start() error {
	var bound []*boundListener
	closeAll := func() {
		for _, bl := range bound {
			bl.ln.Close()
			bl.sec.close()
		}
	}
	for li, l := range b.cfg.Listeners {
		if slices.Contains(b.cfg.ControllerListenerNames, l.Name) {
			continue
		}
		sec, err := b.newListenerSec(l)
		if err != nil {
			closeAll()
			return err
		}
		ln, err := b.listen(net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
		if err != nil {
			sec.close()
			closeAll()
			return fmt.Errorf("listen %s:%d: %w", l.Host, l.Port, err)
		}
		bound = append(bound, &boundListener{ln: ln, sec: sec})
		// With port 0 the advertised port is the one the kernel chose.
		if l.Port == 0 {
			port := ln.Addr().(*net.TCPAddr).Port
			b.cfg.Listeners[li].Port = port
			for i := range b.cfg.AdvertisedListeners {
				if b.cfg.AdvertisedListeners[i].Name == l.Name && b.cfg.AdvertisedListeners[i].Port == 0 {
					b.cfg.AdvertisedListeners[i].Port = port
				}
			}
		}
	}
	if len(bound) == 0 {
		return errors.New("no broker listener configured (every listener is a controller listener)")
	}
	self, err := b.selfRegistration()
	if err != nil {
		closeAll()
		return err
	}
	if err := b.meta.SetSelf(self); err != nil {
		closeAll()
		return fmt.Errorf("register broker: %w", err)
	}
	// Feature levels of `storage format --release-version`, before any
	// client asks for them.
	if fs, ok := b.meta.(metadata.FeatureStore); ok {
		levels, err := metadata.ApplyBootstrapFeatures(fs, b.cfg.LogDirs[0], fitBootstrapFeatures)
		if err != nil {
			closeAll()
			return fmt.Errorf("bootstrap feature levels: %w", err)
		}
		if levels != nil {
			b.log.Info("initial feature levels of storage format --release-version", "levels", levels)
		}
	}
	// Credentials of `storage format --add-scram`, before any client can
	// try them.
	added, err := metadata.ApplyBootstrapScram(b.meta, b.cfg.LogDirs[0])
	if err != nil {
		closeAll()
		return fmt.Errorf("bootstrap SCRAM credentials: %w", err)
	}
	for _, c := range added { // as Kafka logs each replayed UserScramCredentialRecord
		b.log.Info("added a SCRAM credential of storage format --add-scram", "user", c.User, "mechanism", c.Mechanism)
	}
	srv := newServer(b, bound)
	b.mu.Lock() // applyImage (the metadata goroutine) reads srv
	b.srv = srv
	b.mu.Unlock()
	srv.start()
	go b.watchLogDirs()
	if err := b.startHTTP(); err != nil {
		b.Close()
		return err
	}
	addrs := make([]string, len(bound))
	for i, bl := range bound {
		addrs[i] = bl.sec.name + "://" + bl.ln.Addr().String()
	}
	b.log.Info("silkworm broker started", "node.id", b.nodeID, "listeners", addrs, "log.dirs", b.cfg.LogDirs)
	return nil
}

// Addr is the address of the broker's first listener, once started.
func (b *Broker) Addr() string {
	if b.srv == nil {
		return ""
	}
	return b.srv.lns[0].ln.Addr().String()
}

// ListenerAddr is the address the named listener (upper case) listens on,
// once started, or "" when there is no such broker listener.
func (b *Broker) ListenerAddr(name string) string {
	if b.srv == nil {
		return ""
	}
	for _, bl := range b.srv.lns {
		if bl.sec.name == name {
			return bl.ln.Addr().String()
		}
	}
	return ""
}

// Close stops serving, waits for handlers in flight, and closes the logs
// cleanly so that the next start needs no recovery.
//
// In a cluster it first asks the controller to move leadership away
// (controlled shutdown), so producers and consumers fail over before the
// broker stops answering. Calls after the first return the first's error.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.close() })
	return b.closeErr
}

// close is Close's body; it runs once.
func (b *Broker) close() error {
	b.closeHTTP()
	if _, ok := b.controller(); ok && b.srv != nil && !b.killed.Load() {
		// Bounded like Kafka's controlled.shutdown retries: without a
		// reachable controller the broker stops anyway.
		done := make(chan error, 1)
		go func() { done <- b.cluster.ControlledShutdown(b.nodeID) }()
		select {
		case err := <-done:
			if err != nil {
				b.log.Warn("controlled shutdown", "err", err)
			}
		case <-time.After(controlledShutdownTimeout):
			b.log.Warn("controlled shutdown: no answer from the controller; stopping anyway")
		}
	}
	if b.srv != nil {
		close(b.stopWatch)
		b.srv.close()
	}
	if b.isr != nil {
		b.isr.close()
	}
	if b.rebalance != nil {
		b.rebalance.close()
	}
	if b.repl != nil {
		b.repl.Close()
	}
	b.stopShares()
	b.stopTxns()
	b.stopGroups()
	err := b.logs.Close()
	if b.cluster != nil {
		err = errors.Join(err, b.cluster.Close())
	}
	if b.controllerSec != nil {
		b.controllerSec.close()
	}
	return err
}

// storageConfigFor returns the storage config of topic for the manager.
func (b *Broker) storageConfigFor(topic string) storage.Config {
	b.mu.RLock()
	ts := b.topics[topic]
	b.mu.RUnlock()
	if ts != nil {
		return storageConfig(ts.cfg)
	}
	im := b.meta.Image()
	var overrides map[string]string
	if t := im.Topics[topic]; t != nil {
		overrides = t.Configs
	}
	tc, err := config.ResolveTopic(b.dynamicConfig(im), overrides)
	if err != nil {
		tc, _ = config.ResolveTopic(b.cfg, nil)
	}
	return storageConfig(tc)
}

func storageConfig(t config.Topic) storage.Config {
	c := storage.DefaultConfig()
	c.SegmentBytes = int64(t.SegmentBytes)
	c.SegmentMs = t.SegmentMs
	c.SegmentJitterMs = t.SegmentJitterMs
	c.IndexIntervalBytes = int32(t.IndexIntervalBytes)
	c.MaxIndexSize = int32(t.SegmentIndexBytes)
	c.RetentionMs = t.RetentionMs
	c.RetentionBytes = t.RetentionBytes
	c.FileDeleteDelayMs = t.FileDeleteDelayMs
	c.FlushIntervalMessages = t.FlushMessages
	c.FlushIntervalMs = t.FlushMs
	c.Compact = slices.Contains(t.CleanupPolicy, "compact")
	c.Delete = slices.Contains(t.CleanupPolicy, "delete")
	c.DeleteRetentionMs = t.DeleteRetentionMs
	c.MinCleanableDirtyRatio = t.MinCleanableDirtyRatio
	c.MinCompactionLagMs = t.MinCompactionLagMs
	c.MaxCompactionLagMs = t.MaxCompactionLagMs
	return c
}

// applyImage makes the local replicas match a metadata image: creates
// logs for new partitions, deletes logs of deleted topics, and applies
// config changes. Called by the metadata store under its lock.
func (b *Broker) applyImage(im *metadata.Image) error {
	b.authz.apply(im)
	b.refreshListenerTLS(im, false)
	b.mu.Lock()
	defer b.mu.Unlock()
	dyn := b.dynamicConfig(im) // topic defaults follow dynamic broker configs
	var errs []error
	var deleted []string // topics gone, or recreated under a new id
	for name, t := range im.Topics {
		tc, err := config.ResolveTopic(dyn, t.Configs)
		if err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", name, err))
			continue
		}
		// topicState is replaced, never changed, so handlers may keep one
		// without holding b.mu.
		old := b.topics[name]
		ts := &topicState{name: name, id: t.ID, cfg: tc}
		if old != nil && old.id != t.ID {
			b.deleteTopicLocked(old) // recreated under the same name
			deleted = append(deleted, name)
		} else if old != nil {
			ts.partitions = slices.Clone(old.partitions)
		}
		b.topics[name] = ts
		ts.metrics = b.metrics.topic(name)
		scfg := storageConfig(tc)
		for _, p := range ts.partitions {
			if p != nil {
				p.Log.SetConfig(scfg)
			}
		}
		for i, pa := range t.Partitions {
			var p *partition.Partition
			if i < len(ts.partitions) {
				p = ts.partitions[i]
			} else {
				ts.partitions = append(ts.partitions, nil)
			}
			if !slices.Contains(pa.Replicas, b.nodeID) {
				if p != nil { // reassigned away from this broker
					if b.repl != nil {
						b.repl.Unfollow(p)
					}
					// No longer leader: acks=all produces waiting on this
					// replica answer NOT_LEADER_OR_FOLLOWER now.
					p.MakeFollower(b.nodeID, pa.Leader, pa.LeaderEpoch, pa.PartitionEpoch, pa.Replicas, pa.ISR)
					if err := b.logs.Delete(name, pa.Partition); err != nil {
						errs = append(errs, err)
					}
					ts.partitions[i] = nil
				}
				continue
			}
			if p == nil {
				l, err := b.logs.GetOrCreate(name, pa.Partition, t.ID, scfg)
				if err != nil {
					errs = append(errs, fmt.Errorf("open log %s-%d: %w", name, pa.Partition, err))
					continue
				}
				if b.cluster == nil {
					p = partition.New(name, pa.Partition, t.ID, l, b.nodeID, pa.LeaderEpoch)
				} else {
					p = partition.NewReplica(name, pa.Partition, t.ID, l, b.nodeID)
				}
				ts.partitions[i] = p
			}
			if b.cluster != nil {
				b.applyRole(im, p, pa)
			}
		}
	}
	for name, ts := range b.topics {
		if _, ok := im.Topics[name]; !ok {
			b.deleteTopicLocked(ts)
			deleted = append(deleted, name)
		}
	}
	if b.groups != nil {
		b.groups.OnTopicsDeleted(deleted) // their committed offsets go too
	}
	// Logs on disk that no topic owns belong to topics deleted while the
	// broker was down.
	for _, l := range b.logs.Logs() {
		ts := b.topics[l.Topic()]
		if ts == nil || int(l.Partition()) >= len(ts.partitions) || ts.partitions[l.Partition()] == nil ||
			ts.partitions[l.Partition()].Log != l {
			if err := b.logs.Delete(l.Topic(), l.Partition()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (b *Broker) deleteTopicLocked(ts *topicState) {
	delete(b.topics, ts.name)
	b.metrics.removeTopic(ts.name)
	for _, p := range ts.partitions {
		if p == nil {
			continue
		}
		if b.repl != nil {
			b.repl.Unfollow(p)
		}
		if ts.name == offsetsTopic && b.groups != nil {
			// The coordinator lets go of the deleted log; a new
			// __consumer_offsets loads afresh (Kafka's onResignation
			// for deleted partitions).
			b.unloadOffsetsPartition(p)
		}
		if err := b.logs.Delete(ts.name, p.Index); err != nil {
			b.log.Error("delete log", "partition", p.String(), "err", err)
		}
	}
}

// topic returns the state of a topic, or nil.
func (b *Broker) topic(name string) *topicState {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.topics[name]
}

// topicByID returns the state of a topic by id, or nil.
func (b *Broker) topicByID(id [16]byte) *topicState {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, ts := range b.topics {
		if ts.id == id {
			return ts
		}
	}
	return nil
}

// partition returns a local partition replica, or nil.
func (b *Broker) partition(topic string, index int32) (*topicState, *partition.Partition) {
	ts := b.topic(topic)
	if ts == nil || index < 0 || int(index) >= len(ts.partitions) {
		return ts, nil
	}
	return ts, ts.partitions[index]
}

// requestISRExpand asks the controller to add a caught-up follower to the
// ISR (a no-op on a single node, which has no followers).
func (b *Broker) requestISRExpand(p *partition.Partition, replica int32) {
	if b.isr != nil {
		b.isr.expand(p, replica)
	}
}

// intConfig reads an integer broker key that has no typed field yet; the
// config package has validated it already.
func intConfig(cfg *config.Broker, key string, def int64) int64 {
	if v, ok := cfg.Value(key); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// boolConfig is intConfig for booleans.
func boolConfig(cfg *config.Broker, key string, def bool) bool {
	if v, ok := cfg.Value(key); ok {
		if bv, err := strconv.ParseBool(v); err == nil {
			return bv
		}
	}
	return def
}

// controlledShutdownTimeout bounds how long Close waits for the
// controller to move leadership away.
const controlledShutdownTimeout = 5 * time.Second

// controller returns the active controller's id when one is known.
func (b *Broker) controller() (int32, bool) {
	if b.cluster == nil {
		return -1, false
	}
	return b.cluster.Leader()
}

// Failed is closed when every log dir of the broker has gone offline after
// an I/O error. Kafka halts such a broker; the server command shuts down
// (a controlled shutdown first, so leadership moves to healthy replicas)
// and exits non-zero.
func (b *Broker) Failed() <-chan struct{} { return b.failed }

// watchLogDirs closes failed once no log dir is online any more.
func (b *Broker) watchLogDirs() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.stopWatch:
			return
		case <-t.C:
		}
		dirs := b.logs.Dirs()
		online := 0
		for _, offline := range dirs {
			if !offline {
				online++
			}
		}
		if len(dirs) > 0 && online == 0 {
			b.log.Error("every log dir is offline after an I/O error; the broker must stop", "log.dirs", b.cfg.LogDirs)
			b.failedOnce.Do(func() { close(b.failed) })
			return
		}
	}
}

// countFailedAuthentication records a failed TLS handshake or SASL
// authentication.
func (b *Broker) countFailedAuthentication() { b.failedAuth.Add(1) }

// FailedAuthentications is how many authentications failed since start.
func (b *Broker) FailedAuthentications() int64 { return b.failedAuth.Load() }

// Kill stops the broker as abruptly as an in-process stop can: no
// controlled shutdown, connections and listeners closed at once, every
// goroutine stopped. With a storage FS that refuses writes from the same
// moment (what embedded clusters do) nothing more reaches the disk, so
// the next start recovers the logs as after kill -9. Kill must not be
// called concurrently with Close.
func (b *Broker) Kill() error {
	b.killed.Store(true)
	return b.Close()
}

// clusterID is the cluster id a single node starts with:
// silkworm.cluster.id when set, else the one meta.properties records in the
// log dirs (a directory formatted by `silkworm storage format`), else ""
// (a new cluster picks one). In a Raft cluster the controller's log holds
// the id; a new cluster's first controller takes it from its formatted
// dirs (openQuorum), and every node's formatted dirs must match it.
func (b *Broker) clusterID() (string, error) {
	if b.cfg.ClusterID != "" {
		return b.cfg.ClusterID, nil
	}
	id, err := storage.FormattedClusterID(b.fs, b.cfg.LogDirs)
	if err != nil {
		return "", fmt.Errorf("log dirs: %w", err)
	}
	return id, nil
}
