package metadata

import (
	"fmt"
	"testing"
	"time"
)

// sessionCluster starts three combined nodes that registered themselves
// with SetSelf, with a session timeout far longer than the test, so only
// the session connections can fence a stopped node.
func sessionCluster(t *testing.T) *testCluster {
	t.Helper()
	c := newTestCluster(t, 3, 0, func(cfg *QuorumConfig) {
		cfg.BrokerSessionTimeout = 10 * time.Minute
		cfg.HeartbeatInterval = 200 * time.Millisecond
	})
	c.leader()
	for _, q := range c.running() {
		if err := q.SetSelf(Broker{NodeID: q.NodeID(), Host: "127.0.0.1", Port: 9000 + q.NodeID()}); err != nil {
			t.Fatalf("SetSelf %d: %v", q.NodeID(), err)
		}
	}
	return c
}

// waitFenced waits until the leader's image shows broker id fenced, and
// fails when the others are not all unfenced.
func waitFenced(t *testing.T, c *testCluster, id int32) {
	t.Helper()
	waitFor(t, time.Minute, func() error {
		im := c.leader().Image()
		for _, q := range c.running() {
			if b := im.BrokerByID(q.NodeID()); b == nil || b.Fenced {
				t.Fatalf("live broker %d fenced: %+v", q.NodeID(), b)
			}
		}
		if b := im.BrokerByID(id); b == nil || !b.Fenced {
			return fmt.Errorf("broker %d not fenced yet: %+v", id, b)
		}
		return nil
	})
}

// A stopped broker is fenced when its controller session closes, long
// before its heartbeat session would expire.
func TestSessionClosedFencesBroker(t *testing.T) {
	c := sessionCluster(t)
	victim := c.follower().NodeID()
	c.stop(victim)
	waitFenced(t, c, victim)
}

// When the active controller's node stops, the brokers report the closed
// session to the next controller, which fences the old one's broker.
func TestLostControllerIsFenced(t *testing.T) {
	c := sessionCluster(t)
	victim := c.leader().NodeID()
	c.stop(victim)
	waitFenced(t, c, victim)
}

// Moving to a new controller is not a death: after a leadership transfer
// every broker stays unfenced and keeps a session.
func TestLeadershipTransferKeepsBrokers(t *testing.T) {
	c := sessionCluster(t)
	old := c.leader()
	if err := old.raft.LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	waitFor(t, time.Minute, func() error {
		l := c.leader()
		if l == old {
			return fmt.Errorf("node %d still leads", old.NodeID())
		}
		l.ctrl.mu.Lock()
		n := len(l.ctrl.sessions)
		l.ctrl.mu.Unlock()
		if n != 3 {
			return fmt.Errorf("%d sessions on the new controller", n)
		}
		return nil
	})
	im := c.converged()
	for _, q := range c.running() {
		if b := im.BrokerByID(q.NodeID()); b == nil || b.Fenced {
			t.Fatalf("broker %d fenced after a leadership transfer: %+v", q.NodeID(), b)
		}
	}
}

// A broker that never held a session with this controller (it died while
// no controller was active) is fenced once its listener refuses
// connections; while its listener accepts (a paused process) it is not.
func TestSessionlessBrokerProbed(t *testing.T) {
	c := sessionCluster(t)
	h := newHeartbeater(t)
	defer h.ln.Close()
	const id = 4
	if err := c.leader().RegisterBroker(Broker{NodeID: id, Host: "127.0.0.1", Port: h.port(), Incarnation: "probed"}, ""); err != nil {
		t.Fatal(err)
	}
	h.start(c, id)
	waitFor(t, time.Minute, func() error {
		if b := c.leader().Image().BrokerByID(id); b == nil || b.Fenced {
			return fmt.Errorf("broker %d not live: %+v", id, b)
		}
		return nil
	})
	h.halt()
	time.Sleep(3 * sessionGrace) // paused: listener open, no heartbeats
	if b := c.leader().Image().BrokerByID(id); b.Fenced {
		t.Fatalf("paused broker fenced: %+v", b)
	}
	h.ln.Close()
	waitFenced(t, c, id)
}
