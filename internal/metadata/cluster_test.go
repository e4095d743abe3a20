package metadata

import (
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// testCluster is an in-process metadata quorum on 127.0.0.1 port 0 with
// temporary dirs.
type testCluster struct {
	t      *testing.T
	voters map[int32]string
	cfgs   map[int32]QuorumConfig

	mu    sync.Mutex // guards nodes
	nodes map[int32]*Quorum
}

func testLogger() *slog.Logger {
	if os.Getenv("SILKWORM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newTestCluster starts voters controllers (ids 1..voters) and
// brokerOnly broker-only nodes (ids after them). tweak adjusts each
// config.
func newTestCluster(t *testing.T, voters, brokerOnly int, tweak func(*QuorumConfig)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, voters: map[int32]string{}, cfgs: map[int32]QuorumConfig{}, nodes: map[int32]*Quorum{}}
	lns := map[int32]net.Listener{}
	for id := int32(1); id <= int32(voters+brokerOnly); id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[id] = ln
		if id <= int32(voters) {
			c.voters[id] = ln.Addr().String()
		}
	}
	for id, ln := range lns {
		cfg := DefaultQuorumConfig()
		cfg.NodeID = id
		cfg.Voters = c.voters
		cfg.Dir = t.TempDir()
		cfg.Bind = ln.Addr().String()
		cfg.IsController = id <= int32(voters)
		cfg.BrokerSessionTimeout = 2 * time.Second
		cfg.HeartbeatInterval = 100 * time.Millisecond
		cfg.ElectionTimeout = 500 * time.Millisecond
		cfg.Logger = testLogger()
		if tweak != nil {
			tweak(&cfg)
		}
		c.cfgs[id] = cfg
		c.open(id, ln)
	}
	t.Cleanup(c.closeAll)
	return c
}

func (c *testCluster) open(id int32, ln net.Listener) *Quorum {
	c.t.Helper()
	cfg := c.cfgs[id]
	if ln == nil {
		var err error
		// Rebind the same address; a restarted node keeps its identity.
		waitFor(c.t, 10*time.Second, func() error {
			ln, err = net.Listen("tcp", cfg.Bind)
			return err
		})
	}
	cfg.Listener = ln
	q, err := OpenQuorum(cfg)
	if err != nil {
		c.t.Fatalf("open node %d: %v", id, err)
	}
	c.mu.Lock()
	c.nodes[id] = q
	c.mu.Unlock()
	return q
}

func (c *testCluster) node(id int32) *Quorum {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

func (c *testCluster) running() []*Quorum {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Quorum
	for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
		out = append(out, c.nodes[id])
	}
	return out
}

func (c *testCluster) stop(id int32) {
	c.t.Helper()
	c.mu.Lock()
	q := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	if err := q.Close(); err != nil {
		c.t.Logf("close node %d: %v", id, err)
	}
}

func (c *testCluster) closeAll() {
	for _, q := range c.running() {
		c.stop(q.NodeID())
	}
}

// leader waits for an active controller among the running nodes.
func (c *testCluster) leader() *Quorum {
	c.t.Helper()
	var leader *Quorum
	waitFor(c.t, 20*time.Second, func() error {
		for _, q := range c.running() {
			if q.IsActiveController() {
				leader = q
				return nil
			}
		}
		return fmt.Errorf("no active controller")
	})
	return leader
}

// follower returns a running controller that is not the leader.
func (c *testCluster) follower() *Quorum {
	c.t.Helper()
	l := c.leader()
	for _, q := range c.running() {
		if q != l && q.cfg.IsController {
			return q
		}
	}
	c.t.Fatal("no follower")
	return nil
}

// converged waits until every running node has applied the same epoch
// as the leader, and returns the leader's image.
func (c *testCluster) converged() *Image {
	c.t.Helper()
	var im *Image
	waitFor(c.t, 20*time.Second, func() error {
		im = c.leader().Image()
		for _, q := range c.running() {
			if e := q.Image().Epoch; e != im.Epoch {
				return fmt.Errorf("node %d at epoch %d, leader at %d", q.NodeID(), e, im.Epoch)
			}
		}
		return nil
	})
	return im
}

// waitFor polls cond until it returns nil or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heartbeater sends heartbeats for a broker until stopped. It also holds
// the broker's listener, as a live broker process does: the controller
// fences a broker without a session whose listener refuses connections.
type heartbeater struct {
	stop chan struct{}
	done chan struct{}
	ln   net.Listener
}

// port is the broker's listener port, to register it with.
func (h *heartbeater) port() int32 { return int32(h.ln.Addr().(*net.TCPAddr).Port) }

func newHeartbeater(t *testing.T) *heartbeater {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &heartbeater{ln: ln}
}

// start sends heartbeats (again, after halt) on the same listener.
func (h *heartbeater) start(c *testCluster, id int32) *heartbeater {
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(h.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if qs := c.running(); len(qs) > 0 {
				_ = qs[int(id)%len(qs)].Heartbeat(id)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// halt stops the heartbeats; the listener stays open, as a paused
// process's does, until the test ends.
func (h *heartbeater) halt() {
	close(h.stop)
	<-h.done
}

// registerBrokers registers brokers ids (rack racks[i] if given) from the
// test, keeps them heartbeating and waits until they are unfenced.
func registerBrokers(t *testing.T, c *testCluster, ids []int32, racks []string) map[int32]*heartbeater {
	t.Helper()
	hbs := map[int32]*heartbeater{}
	for i, id := range ids {
		h := newHeartbeater(t)
		t.Cleanup(func() { h.ln.Close() })
		b := Broker{NodeID: id, Host: "127.0.0.1", Port: h.port(), Incarnation: fmt.Sprintf("inc-%d", id)}
		if racks != nil {
			r := racks[i]
			b.Rack = &r
		}
		if err := c.running()[0].RegisterBroker(b, ""); err != nil {
			t.Fatalf("register %d: %v", id, err)
		}
		hbs[id] = h.start(c, id)
	}
	t.Cleanup(func() {
		for _, h := range hbs {
			select {
			case <-h.stop:
			default:
				h.halt()
			}
		}
	})
	waitFor(t, 20*time.Second, func() error {
		im := c.leader().Image()
		for _, id := range ids {
			if b := im.BrokerByID(id); b == nil || b.Fenced {
				return fmt.Errorf("broker %d not live: %+v", id, b)
			}
		}
		return nil
	})
	return hbs
}
