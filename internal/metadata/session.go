package metadata

// Broker sessions: fast detection of a dead broker.
//
// Kafka fences a broker only when its heartbeats stop for
// broker.session.timeout.ms (9 s by default), so a killed leader's
// partitions are unavailable for that long. Silkworm keeps Kafka's
// heartbeats and timeout, and adds one long-lived TCP connection from each
// registered broker to the active controller (first byte connSession).
// Nothing flows on it while both ends live; what matters is how it ends:
//
//   - The broker's process dies (kill -9, a crash, an OOM kill): its kernel
//     closes the socket and the controller reads EOF or a reset at once. The
//     controller fences the broker, as it would after a missed session, but
//     about a second after the death instead of nine.
//   - The broker moves to another controller (Raft elected a new leader):
//     it first writes sessionBye, and the controller does not fence it.
//     A broker that stops just closes: after a controlled shutdown it is
//     fenced already, and without one it is gone.
//   - The controller loses leadership while running: it writes
//     sessionStepDown and closes; brokers connect to the new controller.
//   - The active controller's process dies: each broker reads EOF without
//     sessionStepDown. It tells the next active controller, in its hello,
//     which node (and incarnation) it lost that way, and the new controller
//     fences that node's broker as soon as it is elected.
//
//   - A broker has no session with a new controller, because the process
//     died while no controller was active (or while a paused controller
//     was stepping down), so nobody saw its session end: the controller
//     probes the broker's listener once it has had no session for
//     sessionGrace. A refused connection means nothing listens on that
//     port any more, and the broker is fenced.
//
// A process that is merely paused (SIGSTOP, a long GC pause) keeps its
// sockets open: nothing is read, nothing is closed, and only the ordinary
// session timeout can fence it. A network partition without resets behaves
// the same. (Embedded clusters' simulated cuts close connections, so there
// a cut broker is fenced at once, as if it had died.)

import (
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"syscall"
	"time"
)

// connSession starts a broker session connection on the controller
// listener.
const connSession byte = 'S'

// Single bytes sent on a session connection before a deliberate close.
const (
	sessionBye      byte = 'B' // broker → controller: not a death, do not fence
	sessionStepDown byte = 'D' // controller → broker: leadership lost, reconnect
)

// sessionHello opens a session.
type sessionHello struct {
	NodeID      int32  `json:"node_id"`
	Incarnation string `json:"incarnation"`
	// Lost names the controller node whose session this broker saw die
	// (EOF without sessionStepDown), if any since its last session.
	Lost *sessionPeer `json:"lost,omitempty"`
}

// sessionPeer names one process: a node and its incarnation.
type sessionPeer struct {
	NodeID      int32  `json:"node_id"`
	Incarnation string `json:"incarnation"`
}

// sessionAnswer accepts a session (OK, naming the controller process) or
// refuses it (Leader: where the active controller may be).
type sessionAnswer struct {
	OK          bool   `json:"ok"`
	NodeID      int32  `json:"node_id"`
	Incarnation string `json:"incarnation"`
	Leader      string `json:"leader,omitempty"`
	Msg         string `json:"msg,omitempty"`
}

// brokerSession is an open session on the active controller.
type brokerSession struct {
	conn        net.Conn
	incarnation string
	ended       bool // closed by the controller (replaced or leadership lost); guarded by controller.mu
}

// serveSession serves one session connection on this node's controller:
// it accepts the session while this node is the active controller and
// fences the broker when the connection dies without sessionBye.
func (q *Quorum) serveSession(c net.Conn) {
	select {
	case <-q.started:
	case <-q.mux.closed:
		c.Close()
		return
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var hello sessionHello
	if err := json.NewDecoder(c).Decode(&hello); err != nil {
		c.Close()
		return
	}
	s, ans := q.ctrl.openSession(&hello, c)
	_ = json.NewEncoder(c).Encode(&ans)
	if s == nil {
		c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	var b [1]byte
	_, err := c.Read(b[:])
	bye := err == nil && b[0] == sessionBye
	q.ctrl.endSession(hello.NodeID, s, !bye)
	c.Close()
}

// openSession accepts a session from a registered broker while this node
// is the active controller; it counts as a heartbeat. A reported lost
// controller process is fenced first.
func (c *controller) openSession(hello *sessionHello, conn net.Conn) (*brokerSession, sessionAnswer) {
	q := c.q
	ans := sessionAnswer{NodeID: q.cfg.NodeID, Incarnation: q.incarnation}
	if !q.active.Load() {
		ans.Leader = q.leaderAddr()
		ans.Msg = "not the active controller"
		return nil, ans
	}
	if l := hello.Lost; l != nil && l.NodeID != q.cfg.NodeID {
		c.fenceDead(l.NodeID, l.Incarnation, "the broker's controller session to it closed")
	}
	im := q.image.Load()
	b := im.BrokerByID(hello.NodeID)
	if b == nil || b.Incarnation != hello.Incarnation {
		ans.Msg = "broker not registered with this incarnation"
		return nil, ans
	}
	if err := c.heartbeat(im, hello.NodeID); err != nil {
		ans.Msg = err.Error()
		return nil, ans
	}
	s := &brokerSession{conn: conn, incarnation: hello.Incarnation}
	c.mu.Lock()
	if !q.active.Load() {
		c.mu.Unlock()
		ans.Leader, ans.Msg = q.leaderAddr(), "not the active controller"
		return nil, ans
	}
	if old := c.sessions[hello.NodeID]; old != nil {
		old.ended = true
		old.conn.Close()
	}
	c.sessions[hello.NodeID] = s
	delete(c.sessionless, hello.NodeID)
	c.mu.Unlock()
	ans.OK = true
	return s, ans
}

// endSession forgets a session whose connection ended; died means it
// ended without sessionBye, so the broker's process is taken for dead.
func (c *controller) endSession(id int32, s *brokerSession, died bool) {
	c.mu.Lock()
	ended := s.ended
	if c.sessions[id] == s {
		delete(c.sessions, id)
		c.sessionless[id] = time.Now()
	}
	s.ended = true
	c.mu.Unlock()
	if died && !ended {
		c.fenceDead(id, s.incarnation, "its controller session closed without a goodbye")
	}
}

// fenceDead fences broker id when it is unfenced, still the given
// incarnation, and has no open session: its process is gone.
func (c *controller) fenceDead(id int32, incarnation, why string) {
	q := c.q
	if !q.active.Load() {
		return
	}
	b := q.image.Load().BrokerByID(id)
	if b == nil || b.Fenced || b.Incarnation != incarnation {
		return
	}
	c.mu.Lock()
	_, open := c.sessions[id]
	c.mu.Unlock()
	if open {
		return
	}
	q.log.Info("fencing broker whose process is gone", "broker", id, "reason", why)
	if _, err := q.applyRecord(&record{Type: recFenceBroker, NodeID: id}); err != nil {
		q.log.Warn("fence broker", "broker", id, "err", err)
	}
}

// How often the active controller looks for brokers without a session,
// and how long a broker may go without one before its listener is probed:
// a live broker connects within milliseconds of learning the new leader.
const (
	probeInterval = 250 * time.Millisecond
	sessionGrace  = time.Second
	probeTimeout  = time.Second
)

// probeSessionless dials the listener of every unfenced broker that has
// had no session for sessionGrace, and fences those whose connection is
// refused: no process listens there any more. A paused process still
// accepts connections (its kernel completes the handshake), and a dial
// that times out proves nothing; both are left to the session timeout.
func (c *controller) probeSessionless(now time.Time) {
	q := c.q
	type target struct {
		id          int32
		incarnation string
		addr        string
	}
	var targets []target
	im := q.image.Load()
	c.mu.Lock()
	for _, b := range im.Brokers {
		since, ok := c.sessionless[b.NodeID]
		if !ok {
			c.sessionless[b.NodeID] = now
			continue
		}
		if b.Fenced || b.NodeID == q.cfg.NodeID || c.probing[b.NodeID] || now.Sub(since) < sessionGrace {
			continue
		}
		if _, open := c.sessions[b.NodeID]; open || b.Port <= 0 {
			continue
		}
		c.probing[b.NodeID] = true
		targets = append(targets, target{b.NodeID, b.Incarnation, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))})
	}
	c.mu.Unlock()
	for _, t := range targets {
		go func() {
			conn, err := net.DialTimeout("tcp", t.addr, probeTimeout)
			if err == nil {
				conn.Close()
			} else if errors.Is(err, syscall.ECONNREFUSED) {
				c.fenceDead(t.id, t.incarnation, "it has no controller session and its listener "+t.addr+" refuses connections")
			}
			c.mu.Lock()
			delete(c.probing, t.id)
			if _, open := c.sessions[t.id]; !open {
				c.sessionless[t.id] = time.Now() // next probe after another grace
			}
			c.mu.Unlock()
		}()
	}
}

// closeSessions ends every session when this node stops leading: brokers
// read sessionStepDown and connect to the next controller. A node that is
// stopping just closes them: it is gone, as if killed (its broker, after
// a controlled shutdown, is fenced already).
func (c *controller) closeSessions() {
	stopping := false
	select {
	case <-c.q.stop:
		stopping = true
	default:
	}
	c.mu.Lock()
	all := c.sessions
	c.sessions = map[int32]*brokerSession{}
	for _, s := range all {
		s.ended = true
	}
	c.mu.Unlock()
	for _, s := range all {
		if !stopping {
			_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = s.conn.Write([]byte{sessionStepDown})
		}
		s.conn.Close()
	}
}

// sessionLoop keeps this broker's session open with the active controller
// until Close, reconnecting when the controller changes. SetSelf starts it.
func (q *Quorum) sessionLoop() {
	var lost *sessionPeer
	for {
		select {
		case <-q.stop:
			return
		default:
		}
		peer, died := q.runSession(lost)
		switch {
		case died && peer != nil:
			lost = peer
			q.hurryElection(true)
		case peer != nil:
			lost = nil // a session was accepted and ended cleanly
		}
		select {
		case <-q.stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runSession opens one session and holds it until it ends. It returns the
// controller process it was connected to (nil if none accepted it) and
// whether that process went away without stepping down.
func (q *Quorum) runSession(lost *sessionPeer) (*sessionPeer, bool) {
	addr := q.leaderAddr()
	if addr == "" {
		return nil, false
	}
	q.selfMu.Lock()
	self := q.self
	q.selfMu.Unlock()
	if self == nil {
		return nil, false
	}
	c, err := q.mux.dial(addr, q.cfg.RequestTimeout)
	if err != nil {
		q.setHint("", addr)
		return nil, false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(q.cfg.RequestTimeout))
	if _, err := c.Write([]byte{connSession}); err != nil {
		return nil, false
	}
	if err := json.NewEncoder(c).Encode(&sessionHello{NodeID: self.NodeID, Incarnation: q.incarnation, Lost: lost}); err != nil {
		return nil, false
	}
	var ans sessionAnswer
	if err := json.NewDecoder(c).Decode(&ans); err != nil {
		return nil, false
	}
	if !ans.OK {
		q.setHint(ans.Leader, addr)
		return nil, false
	}
	_ = c.SetDeadline(time.Time{})
	peer := &sessionPeer{NodeID: ans.NodeID, Incarnation: ans.Incarnation}
	q.hurryElection(false)

	// Hold the session; leave it (with a goodbye) when this node stops or
	// when Raft names another leader (the old one may be paused, not dead).
	read := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := c.Read(b[:])
		if err == nil && b[0] == sessionStepDown {
			err = errSteppedDown
		}
		read <- err
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-read:
			return peer, err != nil && !errors.Is(err, errSteppedDown)
		case <-q.stop:
			// Stopping: no goodbye. A stopped broker is gone, and
			// after a controlled shutdown it is fenced already.
			c.Close()
			<-read
			return peer, false
		case <-tick.C:
			if a := q.leaderAddr(); a != "" && a != addr {
				q.sayBye(c)
				<-read
				return peer, false
			}
		}
	}
}

var errSteppedDown = errors.New("controller stepped down")

// hurryElection shortens (on) or restores (off) how long this voter waits
// without hearing from the Raft leader before it stands for election. A
// voter whose session saw the controller's process die shortens it to the
// leader lease, the shortest Raft allows, so the next controller (which
// fences the dead node) is elected about half a second sooner; it
// restores the configured timeout once a controller accepts its session.
// A merely slow leader never causes this: it needs a closed connection.
func (q *Quorum) hurryElection(on bool) {
	if !q.cfg.IsController || q.hurried.Load() == on {
		return
	}
	rc := q.raft.ReloadableConfig()
	rc.HeartbeatTimeout = q.cfg.ElectionTimeout
	if on {
		rc.HeartbeatTimeout = leaderLease(q.cfg.ElectionTimeout)
	}
	if err := q.raft.ReloadConfig(rc); err != nil {
		q.log.Warn("raft heartbeat timeout", "err", err)
		return
	}
	q.hurried.Store(on)
}

// sayBye ends a session on purpose.
func (q *Quorum) sayBye(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte{sessionBye})
	c.Close()
}
