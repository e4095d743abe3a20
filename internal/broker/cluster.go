package broker

// Cluster wiring: which metadata store a broker uses (the single-node
// Local store, or the Raft quorum when controller.quorum.voters is set),
// this replica's role for each partition (leader or follower, from the
// metadata image), the replica fetchers, and the leader's ISR maintenance
// (shrink after replica.lag.time.max.ms, expand when a follower catches
// up), sent to the controller as AlterPartition requests.

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/replication"
	"github.com/silkworm/silkworm/internal/storage"
)

// clusterStore is what a multi-broker metadata store offers beyond Store.
type clusterStore interface {
	AlterPartition(topic string, partition, leaderID, leaderEpoch, partitionEpoch int32, newISR []int32) (metadata.Partition, error)
	ControlledShutdown(nodeID int32) error
	Leader() (int32, bool)
	Close() error
}

// metadataDirName is where the Raft metadata log lives in the first log
// dir, Kafka's name for it; the storage manager skips it.
const metadataDirName = "__cluster_metadata-0"

// isCluster reports whether this broker runs with a controller quorum.
func isCluster(cfg *config.Broker) bool { return len(cfg.ControllerQuorumVoters) > 0 }

// resolveVoters gives a node configured the KIP-853 way (controller.quorum.
// bootstrap.servers, no controller.quorum.voters) its voter set: the one
// `storage format --initial-controllers` left in its metadata directory.
// Without one, bootstrap servers that are all this node's own controller
// listener make a single node (`storage format --standalone`); any other
// is refused, as such a node would otherwise start a cluster of its own.
func resolveVoters(cfg *config.Broker, log *slog.Logger) error {
	if len(cfg.ControllerQuorumVoters) > 0 || len(cfg.LogDirs) == 0 {
		return nil
	}
	s, ok, err := metadata.ReadBootstrapVoters(cfg.LogDirs[0])
	if err != nil {
		return fmt.Errorf("log dir %s: %w", cfg.LogDirs[0], err)
	}
	if ok {
		voters, err := config.ParseVoters(metadata.BootstrapVotersFile, s)
		if err != nil {
			return err
		}
		controller := len(cfg.ProcessRoles) == 0 || slices.Contains(cfg.ProcessRoles, "controller")
		if controller && !slices.ContainsFunc(voters, func(v config.Voter) bool { return v.ID == cfg.NodeID }) {
			return fmt.Errorf("node %d is a controller but not one of the initial controllers %s its log dir %s was formatted with", cfg.NodeID, s, cfg.LogDirs[0])
		}
		cfg.ControllerQuorumVoters = voters
		log.Info("controller quorum voters from storage format --initial-controllers", "voters", s)
		return nil
	}
	v, _ := cfg.Value("controller.quorum.bootstrap.servers")
	for _, server := range config.SplitList(v) {
		if !ownControllerAddress(cfg, server) {
			return fmt.Errorf("controller.quorum.bootstrap.servers names %s, another node, but this node has no voter set: "+
				"format its log dirs with `silkworm storage format --initial-controllers`, or set controller.quorum.voters "+
				"(Silkworm's voter set is static; a broker-only node needs controller.quorum.voters)", server)
		}
	}
	return nil
}

// ownControllerAddress reports whether host:port is one of this node's
// controller listeners, as listened on or advertised. A listener on all
// interfaces matches any host that resolves to one of this machine's
// addresses; a loopback one any loopback host.
func ownControllerAddress(cfg *config.Broker, hostPort string) bool {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	loopback := func(h string) bool { return h == "localhost" || net.ParseIP(h).IsLoopback() }
	for _, l := range slices.Concat(cfg.Listeners, cfg.AdvertisedListeners) {
		if !slices.Contains(cfg.ControllerListenerNames, l.Name) || strconv.Itoa(l.Port) != port {
			continue
		}
		switch {
		case l.Host == host, loopback(l.Host) && loopback(host):
			return true
		case wildcard(l.Host) && (wildcard(host) || loopback(host) || resolvesToThisMachine(host)):
			return true
		}
	}
	return false
}

// resolvesToThisMachine reports whether one of host's addresses is one of
// this machine's interface addresses.
func resolvesToThisMachine(host string) bool {
	addrs, err := net.LookupHost(host)
	if err != nil {
		return false
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		for _, ia := range ifaddrs {
			if n, ok := ia.(*net.IPNet); ok && ip != nil && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// clientListener is the first listener that is not a controller listener.
func clientListener(cfg *config.Broker) (int, error) {
	for i, l := range cfg.Listeners {
		if !slices.Contains(cfg.ControllerListenerNames, l.Name) {
			return i, nil
		}
	}
	return 0, errors.New("no broker listener configured (every listener is a controller listener)")
}

// openQuorum opens the Raft metadata store for this node.
func (b *Broker) openQuorum() (*metadata.Quorum, error) {
	cfg := b.cfg
	qc := metadata.DefaultQuorumConfig()
	qc.NodeID = cfg.NodeID
	qc.Voters = map[int32]string{}
	for _, v := range cfg.ControllerQuorumVoters {
		qc.Voters[v.ID] = net.JoinHostPort(v.Host, strconv.Itoa(v.Port))
	}
	qc.Dir = filepath.Join(cfg.LogDirs[0], metadataDirName)
	if d, ok := cfg.Value("metadata.log.dir"); ok && d != "" {
		qc.Dir = d
	}
	qc.IsController = len(cfg.ProcessRoles) == 0 || slices.Contains(cfg.ProcessRoles, "controller")
	for _, l := range cfg.Listeners {
		if len(cfg.ControllerListenerNames) > 0 && l.Name == cfg.ControllerListenerNames[0] {
			qc.Bind = net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		}
	}
	if qc.Bind == "" {
		if addr, ok := qc.Voters[cfg.NodeID]; ok {
			qc.Bind = addr
		} else {
			return nil, errors.New("no controller listener: set controller.listener.names and a matching listener")
		}
	}
	qc.BrokerSessionTimeout = time.Duration(cfg.BrokerSessionTimeoutMs) * time.Millisecond
	qc.HeartbeatInterval = time.Duration(cfg.BrokerHeartbeatIntervalMs) * time.Millisecond
	qc.ElectionTimeout = time.Duration(intConfig(cfg, "controller.quorum.election.timeout.ms", 1000)) * time.Millisecond
	// Not the formatted id (b.clusterID): a preset id in the Raft image
	// would end New's wait for the controller before the node caught up.
	qc.ClusterID = cfg.ClusterID
	formatted, err := storage.FormattedClusterID(b.fs, cfg.LogDirs)
	if err != nil {
		return nil, fmt.Errorf("log dirs: %w", err)
	}
	qc.FormattedClusterID = formatted
	qc.Logger = b.log.With("component", "metadata")
	if b.net != nil {
		var err error
		qc.Dial = b.net.DialContext
		if qc.Listener, err = b.listen(qc.Bind); err != nil {
			return nil, fmt.Errorf("controller listener %s: %w", qc.Bind, err)
		}
	}
	cs, err := b.controllerSecurity(&qc)
	if err != nil {
		return nil, fmt.Errorf("controller listener: %w", err)
	}
	q, err := metadata.OpenQuorum(qc)
	if err != nil {
		if cs != nil {
			cs.close()
		}
		return nil, fmt.Errorf("metadata quorum: %w", err)
	}
	b.controllerSec = cs
	return q, nil
}

// replicationConfig maps the replica.* settings.
func replicationConfig(cfg *config.Broker, b *Broker) replication.Config {
	rc := replication.DefaultConfig(cfg.NodeID)
	rc.NumFetchers = cfg.NumReplicaFetchers
	rc.FetchMaxBytes = int32(cfg.ReplicaFetchMaxBytes)
	rc.FetchResponseMax = int32(cfg.ReplicaFetchResponseMaxBytes)
	rc.FetchMinBytes = int32(cfg.ReplicaFetchMinBytes)
	rc.FetchWaitMax = time.Duration(cfg.ReplicaFetchWaitMaxMs) * time.Millisecond
	rc.FetchBackoff = time.Duration(cfg.ReplicaFetchBackoffMs) * time.Millisecond
	rc.SocketTimeout = time.Duration(cfg.ReplicaSocketTimeoutMs) * time.Millisecond
	rc.ReceiveBuffer = int(intConfig(cfg, "replica.socket.receive.buffer.bytes", 65536))
	rc.TLS, rc.SASL = b.interBroker.tls, b.interBroker.sasl
	rc.Dial = b.dialFunc()
	rc.Logger = b.log.With("component", "replica-fetcher")
	return rc
}

// applyRole makes local replica p match its assignment pa. Called from
// applyImage under b.mu and the store's lock: it must not call the store.
func (b *Broker) applyRole(im *metadata.Image, p *partition.Partition, pa metadata.Partition) {
	if pa.Leader == b.nodeID {
		if !p.IsLeader() || p.LeaderEpoch() != pa.LeaderEpoch {
			if b.repl != nil {
				b.repl.Unfollow(p)
			}
			p.MakeLeader(b.nodeID, pa.LeaderEpoch, pa.PartitionEpoch, pa.Replicas, pa.ISR, time.Now())
			if p.Topic == offsetsTopic && b.groups != nil {
				b.loadOffsetsPartition(p)
			}
		} else if !slices.Equal(p.Replicas(), pa.Replicas) {
			// A reassignment changed the replica set: track the new
			// followers (MakeLeader keeps the state of the others).
			p.MakeLeader(b.nodeID, pa.LeaderEpoch, pa.PartitionEpoch, pa.Replicas, pa.ISR, time.Now())
		} else if p.PartitionEpoch() != pa.PartitionEpoch {
			p.SetISR(pa.ISR, pa.PartitionEpoch)
		}
		return
	}
	wasLeader := p.IsLeader()
	changed := wasLeader || p.LeaderEpoch() != pa.LeaderEpoch || p.Leader() != pa.Leader
	p.MakeFollower(b.nodeID, pa.Leader, pa.LeaderEpoch, pa.PartitionEpoch, pa.Replicas, pa.ISR)
	if wasLeader && p.Topic == offsetsTopic && b.groups != nil {
		b.unloadOffsetsPartition(p)
	}
	if b.repl == nil || !changed {
		return
	}
	if pa.Leader < 0 {
		b.repl.Unfollow(p)
		return
	}
	lb := onListener(im.BrokerByID(pa.Leader), b.cfg.InterBrokerListenerName)
	if lb == nil {
		b.repl.Unfollow(p)
		return
	}
	addr := net.JoinHostPort(lb.Host, strconv.Itoa(int(lb.Port)))
	b.log.Debug("following leader", "partition", p.String(), "leader", pa.Leader, "addr", addr, "epoch", pa.LeaderEpoch)
	b.repl.Follow(p, replication.Endpoint{NodeID: pa.Leader, Addr: addr}, pa.LeaderEpoch)
}

// loadOffsetsPartition loads a __consumer_offsets partition this broker
// just became leader of, off the metadata goroutine: the coordinator's
// loader goroutine runs loads and unloads in order and stops at Close
// (group.Coordinator.OnElection), so a load never reads a closing log.
func (b *Broker) loadOffsetsPartition(p *partition.Partition) {
	b.groups.OnElection(p.Index, b.newOffsetsLog(p))
}

// unloadOffsetsPartition drops the groups of a __consumer_offsets
// partition whose leadership moved to another broker.
func (b *Broker) unloadOffsetsPartition(p *partition.Partition) {
	b.groups.OnResignation(p.Index)
}

// isrManager sends the leader's ISR changes to the controller.
type isrManager struct {
	b       *Broker
	cs      clusterStore
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex // guards pending
	pending map[*partition.Partition]bool
}

func (b *Broker) startISRManager(cs clusterStore) {
	m := &isrManager{b: b, cs: cs, stop: make(chan struct{}), done: make(chan struct{}),
		pending: map[*partition.Partition]bool{}}
	b.isr = m
	go m.loop()
}

func (m *isrManager) close() {
	close(m.stop)
	<-m.done
}

// loop shrinks the ISR of led partitions whose followers lag, every half
// replica.lag.time.max.ms as Kafka does.
func (m *isrManager) loop() {
	defer close(m.done)
	maxLag := time.Duration(m.b.cfg.ReplicaLagTimeMaxMs) * time.Millisecond
	t := time.NewTicker(max(maxLag/2, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		for _, p := range m.b.ledPartitions() {
			lag := p.LaggingFollowers(now, maxLag)
			if len(lag) == 0 {
				continue
			}
			// Each AlterPartition may wait for the metadata request
			// timeout when the quorum is gone: stop between partitions.
			select {
			case <-m.stop:
				return
			default:
			}
			isr := slices.DeleteFunc(p.ISR(), func(r int32) bool { return slices.Contains(lag, r) })
			m.alter(p, isr, "shrink")
		}
	}
}

// expand asks for replica to join p's ISR, once at a time per partition.
func (m *isrManager) expand(p *partition.Partition, replica int32) {
	m.mu.Lock()
	if m.pending[p] {
		m.mu.Unlock()
		return
	}
	m.pending[p] = true
	m.mu.Unlock()
	go func() {
		defer func() {
			m.mu.Lock()
			delete(m.pending, p)
			m.mu.Unlock()
		}()
		isr := p.ISR()
		if slices.Contains(isr, replica) {
			return
		}
		// Count the replica for the high watermark from now on (KIP-497's
		// maximal ISR): once in the ISR it may be elected, so it must hold
		// everything committed.
		p.ExpandISR(replica)
		if !m.alter(p, append(isr, replica), "expand") {
			p.CancelExpandISR(replica)
		}
	}()
}

// alter asks the controller for p's ISR to become isr and reports
// whether it agreed.
func (m *isrManager) alter(p *partition.Partition, isr []int32, why string) bool {
	if len(isr) == 0 {
		return false
	}
	res, err := m.cs.AlterPartition(p.Topic, p.Index, m.b.nodeID, p.LeaderEpoch(), p.PartitionEpoch(), isr)
	if err != nil {
		m.b.log.Debug("AlterPartition", "partition", p.String(), "change", why, "isr", isr, "err", err)
		return false
	}
	m.b.log.Info("ISR changed", "partition", p.String(), "change", why, "isr", res.ISR, "partition_epoch", res.PartitionEpoch)
	m.b.metrics.isrChanged(why)
	if p.LeaderEpoch() == res.LeaderEpoch {
		p.SetISR(res.ISR, res.PartitionEpoch)
	}
	return true
}

// ledPartitions lists the partitions this broker leads.
func (b *Broker) ledPartitions() []*partition.Partition {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []*partition.Partition
	for _, ts := range b.topics {
		for _, p := range ts.partitions {
			if p != nil && p.IsLeader() {
				out = append(out, p)
			}
		}
	}
	return out
}
