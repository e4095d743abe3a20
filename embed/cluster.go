package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/storage"
)

// Cluster is a running embedded cluster: Config.Brokers brokers numbered by
// node id from 1. Create it with NewCluster or Start; Close stops it. Its
// methods are safe for concurrent use; calls on one node are serialised.
type Cluster struct {
	cfg    Config
	dir    string
	ownDir bool
	log    *slog.Logger
	net    *network
	nodes  []*node // node id n at nodes[n-1]

	closed   atomic.Bool
	watchers sync.WaitGroup // one per running broker: its Failed channel
}

// node is one broker of the cluster across its restarts.
type node struct {
	id         int32
	dir        string
	clientPort int
	ctrlPort   int // 0 on a single node
	disk       *disk

	mu  sync.Mutex // serialises starts and stops; guards run
	run *run       // nil while the node is down
}

// run is one start of a node: its broker and what it sees of the world.
type run struct {
	b    *broker.Broker
	fs   *nodeFS
	nn   *nodeNet
	stop chan struct{} // ends the Failed watcher
}

// NewCluster starts a cluster: DefaultConfig with opts applied in order,
// validated, then started as Start does.
//
//	c, err := embed.NewCluster(embed.Brokers(3), embed.SeedTopics(6, "orders"))
func NewCluster(opts ...Option) (*Cluster, error) {
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	return Start(cfg)
}

// Start validates cfg and starts every node at once (in a cluster each
// waits for a quorum of controllers), then creates the seed topics and
// waits until their replicas are in sync. It returns when every broker
// answers on its listener. On error nothing is left running.
func Start(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, dir: cfg.Dir, log: cfg.Logger, net: newNetwork(cfg.Brokers)}
	c.cfg.BrokerConfigs = maps.Clone(cfg.BrokerConfigs)
	c.cfg.NodeConfigs = map[int32]map[string]string{}
	for id, m := range cfg.NodeConfigs {
		c.cfg.NodeConfigs[id] = maps.Clone(m)
	}
	c.cfg.Topics = slices.Clone(cfg.Topics)
	c.cfg.ClientOpts = slices.Clone(cfg.ClientOpts)
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "silkworm-embed-")
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		c.dir, c.ownDir = d, true
	}
	fail := func(err error) (*Cluster, error) {
		c.Close()
		return nil, err
	}
	for i := range cfg.Brokers {
		n := &node{id: int32(i + 1), dir: filepath.Join(c.dir, fmt.Sprintf("node-%d", i+1)), disk: &disk{}}
		c.nodes = append(c.nodes, n)
		port := 0
		if i < len(cfg.Ports) {
			port = cfg.Ports[i]
		}
		var err error
		if n.clientPort, err = c.net.reserve(n.id, cfg.ListenHost, port); err != nil {
			return fail(err)
		}
		if cfg.Brokers > 1 {
			if n.ctrlPort, err = c.net.reserve(n.id, cfg.ListenHost, 0); err != nil {
				return fail(err)
			}
		}
	}
	// Every node's config is checked before any starts: a node of a
	// cluster waits for a quorum, which nodes that cannot start never form.
	var errs []error
	for _, n := range c.nodes {
		if _, err := config.Load("", c.props(n)); err != nil {
			errs = append(errs, fmt.Errorf("embed: node %d config: %w", n.id, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	if err := c.startNodes(c.nodes); err != nil {
		return fail(err)
	}
	if err := c.createTopics(); err != nil {
		return fail(err)
	}
	return c, nil
}

// dialHost is the host at which this process reaches the listeners.
func (c *Cluster) dialHost() string {
	if ip := net.ParseIP(c.cfg.ListenHost); ip != nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return c.cfg.ListenHost
}

// props is node n's server.properties, as `silkworm server --override`
// would take them: the wiring of the cluster, then the broker configs, then
// the node's configs. Validate keeps the wiring keys out of the configs.
func (c *Cluster) props(n *node) []string {
	host := c.cfg.ListenHost
	adv := c.cfg.AdvertisedHost
	if adv == "" {
		adv = c.dialHost()
	}
	client := "PLAINTEXT://" + net.JoinHostPort(host, strconv.Itoa(n.clientPort))
	p := map[string]string{
		"node.id":              strconv.Itoa(int(n.id)),
		"log.dirs":             n.dir,
		"listeners":            client,
		"advertised.listeners": "PLAINTEXT://" + net.JoinHostPort(adv, strconv.Itoa(n.clientPort)),
	}
	if len(c.nodes) > 1 {
		voters := make([]string, len(c.nodes))
		for i, o := range c.nodes {
			voters[i] = fmt.Sprintf("%d@%s", o.id, net.JoinHostPort(c.dialHost(), strconv.Itoa(o.ctrlPort)))
		}
		maps.Copy(p, map[string]string{
			"process.roles":                  "broker,controller",
			"listeners":                      client + ",CONTROLLER://" + net.JoinHostPort(host, strconv.Itoa(n.ctrlPort)),
			"controller.listener.names":      "CONTROLLER",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"inter.broker.listener.name":     "PLAINTEXT",
			"controller.quorum.voters":       strings.Join(voters, ","),
		})
	}
	maps.Copy(p, c.cfg.BrokerConfigs)
	maps.Copy(p, c.cfg.NodeConfigs[n.id])
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		out = append(out, k+"="+p[k])
	}
	return out
}

// node returns node id's node, or an error naming the valid range.
func (c *Cluster) node(id int32) (*node, error) {
	if id < 1 || int(id) > len(c.nodes) {
		return nil, fmt.Errorf("embed: no node %d: nodes are 1..%d", id, len(c.nodes))
	}
	return c.nodes[id-1], nil
}

// nodesOf resolves ids, refusing duplicates and unknown ids.
func (c *Cluster) nodesOf(ids []int32) ([]*node, error) {
	var ns []*node
	for _, id := range ids {
		n, err := c.node(id)
		if err != nil {
			return nil, err
		}
		if slices.Contains(ns, n) {
			return nil, fmt.Errorf("embed: node %d named twice", id)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// lock takes the locks of ns in node id order (so concurrent calls on
// overlapping nodes cannot deadlock) and returns the unlock.
func lockNodes(ns []*node) func() {
	sorted := slices.Clone(ns)
	slices.SortFunc(sorted, func(a, b *node) int { return int(a.id - b.id) })
	for _, n := range sorted {
		n.mu.Lock()
	}
	return func() {
		for _, n := range sorted {
			n.mu.Unlock()
		}
	}
}

// startNodes starts the nodes that are down among ns, all at once: in a
// cluster a node's start waits until a quorum of controllers runs, which
// may need several of them.
func (c *Cluster) startNodes(ns []*node) error {
	if c.closed.Load() {
		return errors.New("embed: cluster closed")
	}
	unlock := lockNodes(ns)
	defer unlock()
	if c.closed.Load() { // Close may have stopped them while we waited
		return errors.New("embed: cluster closed")
	}
	errs := make([]error, len(ns))
	var wg sync.WaitGroup
	for i, n := range ns {
		if n.run != nil {
			continue
		}
		wg.Go(func() { errs[i] = c.startLocked(n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startLocked starts node n, which is down: the same configuration path
// and broker code as `silkworm server`, with the node's disk and network.
func (c *Cluster) startLocked(n *node) error {
	cfg, err := config.Load("", c.props(n))
	if err != nil {
		return fmt.Errorf("embed: node %d config: %w", n.id, err)
	}
	log := c.log.With("node", n.id)
	for _, k := range cfg.Ignored {
		log.Warn("config is not supported yet; ignored", "key", k)
	}
	r := &run{fs: newNodeFS(storage.OSFS, n.disk), nn: newNodeNet(c.net, n.id), stop: make(chan struct{})}
	b, err := broker.New(cfg, log, broker.WithStorageFS(r.fs), broker.WithNetwork(r.nn))
	if err != nil {
		r.nn.kill()
		return fmt.Errorf("embed: start node %d: %w", n.id, err)
	}
	if err := b.Start(); err != nil {
		b.Close()
		r.nn.kill()
		return fmt.Errorf("embed: start node %d: %w", n.id, err)
	}
	r.b = b
	n.run = r
	c.watchers.Add(1)
	go c.watchFailed(n, r)
	return nil
}

// watchFailed stops a run whose log dirs have all gone offline, as the
// server command does: a controlled shutdown, then the broker stops.
func (c *Cluster) watchFailed(n *node, r *run) {
	defer c.watchers.Done()
	select {
	case <-r.stop:
		return
	case <-r.b.Failed():
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.run != r {
		return
	}
	c.log.Warn("every log dir is offline after an I/O error; stopping the node", "node", n.id)
	if err := r.b.Close(); err != nil {
		c.log.Warn("stop failed node", "node", n.id, "err", err)
	}
	r.nn.kill()
	n.run = nil
}

// stopLocked ends the run of node n, if any: how is the broker's stop.
// An error the node's injected faults explain (a failed disk, a kill) is
// expected: it is logged, not returned.
func (c *Cluster) stopLocked(n *node, how func(*broker.Broker) error) error {
	r := n.run
	if r == nil {
		return nil
	}
	close(r.stop)
	err := how(r.b)
	r.nn.kill()
	n.run = nil
	if err != nil && r.fs.faulted() {
		c.log.Info("stop after injected faults", "node", n.id, "err", err)
		return nil
	}
	return err
}

// Addrs are the client addresses of nodes 1..n in node order, for
// kgo.SeedBrokers. A node keeps its address across restarts; while it is
// down its address refuses connections.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = net.JoinHostPort(c.dialHost(), strconv.Itoa(n.clientPort))
	}
	return addrs
}

// Addr is the client address of node, or "" when there is no such node.
func (c *Cluster) Addr(node int32) string {
	if _, err := c.node(node); err != nil {
		return ""
	}
	return c.Addrs()[node-1]
}

// DataDir is node's log dir (log.dirs), or "" when there is no such node.
func (c *Cluster) DataDir(node int32) string {
	n, err := c.node(node)
	if err != nil {
		return ""
	}
	return n.dir
}

// Running reports whether node runs: started and not killed, stopped or
// stopped after a disk failure.
func (c *Cluster) Running(node int32) bool {
	n, err := c.node(node)
	if err != nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.run != nil
}

// Kill stops nodes as kill -9 would, all at the same moment: from then on
// nothing they write reaches the disk (what they wrote before stays, as in
// the page cache of a killed process), their connections and listeners are
// closed (bytes still delayed by Latency are dropped), there is no
// controlled shutdown, and every broker goroutine is stopped before Kill
// returns. Restart recovers their logs. Killing a node
// that is down does nothing.
func (c *Cluster) Kill(nodes ...int32) error {
	ns, err := c.nodesOf(nodes)
	if err != nil {
		return err
	}
	unlock := lockNodes(ns)
	defer unlock()
	for _, n := range ns {
		if n.run != nil {
			n.run.fs.kill()
			n.run.nn.kill()
		}
	}
	var wg sync.WaitGroup
	for _, n := range ns {
		// A killed broker's errors are the dead disk's and network's.
		wg.Go(func() { _ = c.stopLocked(n, (*broker.Broker).Kill) })
	}
	wg.Wait()
	return nil
}

// Stop stops nodes one after the other with a controlled shutdown, as
// SIGTERM stops `silkworm server`: the controller moves leadership away
// first, then the broker closes its logs cleanly. Stopping a node that is
// down does nothing.
func (c *Cluster) Stop(nodes ...int32) error {
	ns, err := c.nodesOf(nodes)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range ns {
		n.mu.Lock()
		if err := c.stopLocked(n, (*broker.Broker).Close); err != nil {
			errs = append(errs, fmt.Errorf("embed: stop node %d: %w", n.id, err))
		}
		n.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Restart starts nodes again on their data dirs and ports, all at once,
// after stopping (controlled shutdown) those still running. A killed
// node's logs are recovered as after a crash. In a cluster a node starts
// once it has caught up with the active controller, so a quorum of
// controllers must run: restart a majority together (Restart(1, 2)); the
// broker gives up after 2 minutes without one. Disk faults stay until
// Heal: a node restarted on a failing disk fails to start.
func (c *Cluster) Restart(nodes ...int32) error {
	ns, err := c.nodesOf(nodes)
	if err != nil {
		return err
	}
	if err := c.Stop(nodes...); err != nil {
		return err
	}
	return c.startNodes(ns)
}

// Isolate cuts node off from every other node, as a network partition
// would: connections between them are closed and new ones refused, in
// both directions. Clients still reach every node. Heal reconnects.
func (c *Cluster) Isolate(node int32) error {
	if _, err := c.node(node); err != nil {
		return err
	}
	var others []int32
	for _, n := range c.nodes {
		if n.id != node {
			others = append(others, n.id)
		}
	}
	c.net.cut([]int32{node}, others)
	return nil
}

// Split cuts every node of a off from every node of b (nodes within a set
// still reach each other); Heal reconnects.
func (c *Cluster) Split(a, b []int32) error {
	if _, err := c.nodesOf(a); err != nil {
		return err
	}
	if _, err := c.nodesOf(b); err != nil {
		return err
	}
	for _, x := range a {
		if slices.Contains(b, x) {
			return fmt.Errorf("embed: split: node %d on both sides", x)
		}
	}
	c.net.cut(a, b)
	return nil
}

// Latency delays every byte node sends, to clients and other nodes, by d
// (like netem's delay on the node's interface): order is kept and a
// connection's throughput is not otherwise limited. 0 removes the delay.
func (c *Cluster) Latency(node int32, d time.Duration) error {
	if _, err := c.node(node); err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("embed: latency %v", d)
	}
	c.net.latency[node-1].Store(int64(d))
	return nil
}

// SlowDisk makes every write and fsync on node's log dirs take at least d
// longer. 0 removes the delay.
func (c *Cluster) SlowDisk(node int32, d time.Duration) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("embed: disk delay %v", d)
	}
	n.disk.set(func(dk *disk) { dk.delay = d })
	return nil
}

// FailDisk makes every write, fsync, file creation, rename and removal on
// node's log dirs fail with EIO. The first partition to write takes its
// log dir offline and answers KAFKA_STORAGE_ERROR; the node stops as
// `silkworm server` does when its last log dir went offline. Heal, then
// Restart, brings it back with its logs recovered.
func (c *Cluster) FailDisk(node int32) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	n.disk.set(func(dk *disk) { dk.fault = diskEIO })
	return nil
}

// FullDisk makes every write on node's log dirs fail with ENOSPC (no space
// left on device), with the same consequences as FailDisk.
func (c *Cluster) FullDisk(node int32) error {
	n, err := c.node(node)
	if err != nil {
		return err
	}
	n.disk.set(func(dk *disk) { dk.fault = diskFull })
	return nil
}

// TornWrite makes the next write to a log segment on node land only its
// first n bytes and fail with EIO; from then on the disk fails as with
// FailDisk, as if the machine had died in the middle of the write. After
// Heal and Restart, recovery truncates the torn batch.
func (c *Cluster) TornWrite(node int32, n int) error {
	nd, err := c.node(node)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("embed: torn write at byte %d", n)
	}
	nd.disk.set(func(dk *disk) { dk.fault, dk.tornAt = diskTorn, n })
	return nil
}

// Heal lifts every network and disk fault: cuts, latencies, slow, failing
// and full disks, a torn write not yet fired. Nodes that are down stay
// down (Restart them); a log dir already offline stays offline until its
// node restarts.
func (c *Cluster) Heal() {
	c.net.heal()
	for _, n := range c.nodes {
		n.disk.set(func(dk *disk) { dk.delay, dk.fault, dk.tornAt = 0, diskOK, 0 })
	}
}

// Close stops every running node and waits until every goroutine the
// cluster started has ended; a temporary Dir is removed. There is no
// controlled shutdown (the whole cluster goes), but logs are closed
// cleanly unless a fault prevents it. Close is idempotent.
func (c *Cluster) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, n := range c.nodes {
		wg.Go(func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			errs[i] = c.stopLocked(n, (*broker.Broker).Kill)
		})
	}
	wg.Wait()
	c.net.closeReserved()
	c.net.abortAll()
	c.watchers.Wait()
	c.net.flushers.Wait()
	if c.ownDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}

// createTopics creates the seed topics through the Kafka protocol and
// waits until their replicas are in sync.
func (c *Cluster) createTopics() error {
	if len(c.cfg.Topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.StartTimeout)
	defer cancel()
	cl, err := kgo.NewClient(append(slices.Clone(c.cfg.ClientOpts), kgo.SeedBrokers(c.Addrs()...))...)
	if err != nil {
		return fmt.Errorf("embed: seed topics: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var names []string
	for _, t := range c.cfg.Topics {
		parts, rf := t.Partitions, t.ReplicationFactor
		if parts == 0 {
			parts = 1
		}
		if rf == 0 {
			rf = int16(min(len(c.nodes), 3))
		}
		configs := map[string]*string{}
		for k, v := range t.Configs {
			configs[k] = kadm.StringPtr(v)
		}
		res, err := adm.CreateTopic(ctx, parts, rf, configs, t.Name)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			return fmt.Errorf("embed: seed topic %s: %w", t.Name, err)
		}
		names = append(names, t.Name)
	}
	return c.WaitISR(ctx, names...)
}
