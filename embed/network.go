package embed

// The network between the nodes: every listener and every connection a
// broker opens goes through its node's nodeNet (broker.WithNetwork), so
// the cluster knows both ends of each inter-node connection and can cut
// links, drop connections and delay what a node sends.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxQueued bounds the bytes a delayed connection holds before its
// writer blocks, as a full socket buffer would.
const maxQueued = 4 << 20

// network is the links between the nodes of a cluster: which listener
// port belongs to which node, which pairs of nodes are cut off from each
// other, and the delay each node adds to what it sends. Safe for
// concurrent use.
type network struct {
	latency []atomic.Int64 // by node id - 1, nanoseconds

	mu       sync.Mutex // guards the fields below
	ports    map[int]int32
	reserved map[int]net.Listener // bound before a node starts, taken by its Listen
	cuts     map[[2]int32]bool    // (low, high) node ids
	conns    map[*linkConn]struct{}

	flushers sync.WaitGroup // goroutines writing delayed bytes
}

func newNetwork(nodes int) *network {
	return &network{
		latency:  make([]atomic.Int64, nodes),
		ports:    map[int]int32{},
		reserved: map[int]net.Listener{},
		cuts:     map[[2]int32]bool{},
		conns:    map[*linkConn]struct{}{},
	}
}

func pair(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// reserve binds host:port (0: the kernel chooses) for node and returns the
// port; the node's Listen for that port takes the listener.
func (n *network) reserve(node int32, host string, port int) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("embed: node %d: listen: %w", node, err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	n.mu.Lock()
	n.ports[port] = node
	n.reserved[port] = ln
	n.mu.Unlock()
	return port, nil
}

// closeReserved closes the listeners no node took.
func (n *network) closeReserved() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p, ln := range n.reserved {
		ln.Close()
		delete(n.reserved, p)
	}
}

// nodeOf is the node listening on address's port, or 0 for an address
// outside the cluster. Every listener of the cluster is on this machine,
// so the port identifies it whatever host name reaches it.
func (n *network) nodeOf(address string) int32 {
	_, p, err := net.SplitHostPort(address)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ports[port]
}

// cut separates every node of a from every node of b: new connections
// between them are refused and the open ones are closed.
func (n *network) cut(a, b []int32) {
	n.mu.Lock()
	for _, x := range a {
		for _, y := range b {
			if x != y {
				n.cuts[pair(x, y)] = true
			}
		}
	}
	var drop []*linkConn
	for c := range n.conns {
		if c.peer != 0 && n.cuts[pair(c.local, c.peer)] {
			drop = append(drop, c)
		}
	}
	n.mu.Unlock()
	for _, c := range drop {
		c.abort()
	}
}

// abortAll drops every connection still open or still sending its delayed
// bytes (Cluster.Close, once every node is stopped).
func (n *network) abortAll() {
	n.mu.Lock()
	var drop []*linkConn
	for c := range n.conns {
		drop = append(drop, c)
	}
	n.mu.Unlock()
	for _, c := range drop {
		c.abort()
	}
}

// heal lifts every cut and every delay.
func (n *network) heal() {
	n.mu.Lock()
	clear(n.cuts)
	n.mu.Unlock()
	for i := range n.latency {
		n.latency[i].Store(0)
	}
}

func (n *network) delay(node int32) time.Duration {
	return time.Duration(n.latency[node-1].Load())
}

func (n *network) forget(c *linkConn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

// nodeNet is one run of a node's broker.Network: what that broker listens
// on and dials. Safe for concurrent use.
type nodeNet struct {
	n    *network
	node int32

	mu        sync.Mutex // guards dead and listeners
	dead      bool
	listeners []net.Listener
}

func newNodeNet(n *network, node int32) *nodeNet { return &nodeNet{n: n, node: node} }

// Listen hands over the listener reserved for address's port, or binds it.
// Lock order: network.mu before nodeNet.mu.
func (nn *nodeNet) Listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	if _, p, err := net.SplitHostPort(address); err == nil {
		port, _ := strconv.Atoi(p)
		nn.n.mu.Lock()
		if r := nn.n.reserved[port]; r != nil && port != 0 && nn.n.ports[port] == nn.node {
			ln = r
			delete(nn.n.reserved, port)
		}
		nn.n.mu.Unlock()
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen(network, address); err != nil {
			return nil, err
		}
		nn.n.mu.Lock()
		nn.n.ports[ln.Addr().(*net.TCPAddr).Port] = nn.node
		nn.n.mu.Unlock()
	}
	l := &linkListener{Listener: ln, nn: nn}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if nn.dead {
		ln.Close()
		return nil, &net.OpError{Op: "listen", Net: network, Err: errKilled}
	}
	nn.listeners = append(nn.listeners, l)
	return l, nil
}

// DialContext connects to address unless a cut separates this node from
// the node listening there.
func (nn *nodeNet) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	peer := nn.n.nodeOf(address)
	if err := nn.check(network, address, peer); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	lc := newLinkConn(c, nn, peer)
	// Registered and checked under the same lock as cut, so a cut made
	// while dialing either sees this connection or is seen here.
	nn.n.mu.Lock()
	nn.mu.Lock()
	refused := nn.dead || (peer != 0 && nn.n.cuts[pair(nn.node, peer)])
	if !refused {
		nn.n.conns[lc] = struct{}{}
	}
	nn.mu.Unlock()
	nn.n.mu.Unlock()
	if refused {
		c.Close()
		return nil, nn.check(network, address, peer)
	}
	return lc, nil
}

// check returns the error a dial from this node to peer gets, if any.
func (nn *nodeNet) check(network, address string, peer int32) error {
	nn.mu.Lock()
	dead := nn.dead
	nn.mu.Unlock()
	if dead {
		return &net.OpError{Op: "dial", Net: network, Err: errKilled}
	}
	nn.n.mu.Lock()
	cut := peer != 0 && nn.n.cuts[pair(nn.node, peer)]
	nn.n.mu.Unlock()
	if cut {
		return &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf(
			"embed: node %d cannot reach node %d at %s (network cut): %w", nn.node, peer, address, syscall.ECONNREFUSED)}
	}
	return nil
}

// kill drops every connection and listener of this run at once, as the
// kernel does for a killed process, and refuses new ones.
func (nn *nodeNet) kill() {
	nn.mu.Lock()
	nn.dead = true
	lns := nn.listeners
	nn.listeners = nil
	nn.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	nn.n.mu.Lock()
	var drop []*linkConn
	for c := range nn.n.conns {
		if c.nn == nn {
			drop = append(drop, c)
		}
	}
	nn.n.mu.Unlock()
	for _, c := range drop {
		c.abort()
	}
}

// linkListener wraps accepted connections so the node's delay and kill
// apply to them.
type linkListener struct {
	net.Listener
	nn *nodeNet
}

func (l *linkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := newLinkConn(c, l.nn, 0)
	l.nn.n.mu.Lock()
	l.nn.mu.Lock()
	dead := l.nn.dead
	if !dead {
		l.nn.n.conns[lc] = struct{}{}
	}
	l.nn.mu.Unlock()
	l.nn.n.mu.Unlock()
	if dead {
		c.Close()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: errKilled}
	}
	return lc, nil
}

// linkConn is one end of a connection, on node local; peer is the node at
// the other end when this end dialed it (0 for accepted connections and
// addresses outside the cluster). What local writes waits local's delay,
// keeping its order, in a queue a flusher goroutine drains.
type linkConn struct {
	net.Conn
	nn          *nodeNet
	local, peer int32

	mu       sync.Mutex // guards the fields below
	space    sync.Cond  // signalled when queued bytes leave or the conn fails
	queue    []pendingWrite
	queued   int
	flushing bool  // a flusher goroutine runs
	closing  bool  // Close was called; the flusher closes Conn when done
	werr     error // the first failed delayed write; later writes fail with it
	aborted  chan struct{}
	once     sync.Once
}

type pendingWrite struct {
	p  []byte
	at time.Time
}

func newLinkConn(c net.Conn, nn *nodeNet, peer int32) *linkConn {
	lc := &linkConn{Conn: c, nn: nn, local: nn.node, peer: peer, aborted: make(chan struct{})}
	lc.space.L = &lc.mu
	return lc
}

var errConnClosed = net.ErrClosed

func (c *linkConn) Write(p []byte) (int, error) {
	d := c.nn.n.delay(c.local)
	c.mu.Lock()
	if c.werr != nil || c.closing {
		err := c.werr
		c.mu.Unlock()
		if err == nil {
			err = errConnClosed
		}
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: err}
	}
	if d == 0 && !c.flushing {
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	c.queue = append(c.queue, pendingWrite{p: append([]byte(nil), p...), at: time.Now().Add(d)})
	c.queued += len(p)
	if !c.flushing {
		c.flushing = true
		c.nn.n.flushers.Add(1)
		go c.flush()
	}
	for c.queued > maxQueued && c.werr == nil && !c.closing {
		c.space.Wait()
	}
	err := c.werr
	c.mu.Unlock()
	if err != nil {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: err}
	}
	return len(p), nil
}

// flush writes queued bytes when their time comes, in order, and exits
// when the queue is empty (closing the connection if Close came first).
func (c *linkConn) flush() {
	defer c.nn.n.flushers.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.werr != nil {
			c.flushing = false
			c.queue, c.queued = nil, 0
			closing := c.closing
			c.space.Broadcast()
			c.mu.Unlock()
			if closing {
				c.nn.n.forget(c)
				c.Conn.Close()
			}
			return
		}
		w := c.queue[0]
		c.mu.Unlock()
		t := time.NewTimer(time.Until(w.at))
		var err error
		select {
		case <-t.C:
			_, err = c.Conn.Write(w.p)
		case <-c.aborted:
			t.Stop()
			err = errConnClosed
		}
		c.mu.Lock()
		c.queue = c.queue[1:]
		c.queued -= len(w.p)
		if err != nil && c.werr == nil {
			c.werr = err
		}
		c.space.Broadcast()
		c.mu.Unlock()
	}
}

// SyscallConn exposes the socket for sendfile while nothing is delayed;
// with a delay it fails, so the response is copied through Write and
// waits its turn.
func (c *linkConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	c.mu.Lock()
	busy := c.flushing
	c.mu.Unlock()
	if busy || c.nn.n.delay(c.local) > 0 {
		return nil, errors.New("embed: delayed connection")
	}
	return sc.SyscallConn()
}

// Close closes the connection once what was written has left (after its
// delay), as the kernel sends a closed socket's buffer; reads fail at once.
// A peer that does not read gets lingerTimeout past the last byte's time
// before the rest is dropped.
func (c *linkConn) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	flushing := c.flushing
	if flushing {
		last := time.Now()
		if len(c.queue) > 0 {
			last = c.queue[len(c.queue)-1].at
		}
		_ = c.Conn.SetWriteDeadline(last.Add(lingerTimeout))
	}
	c.space.Broadcast()
	c.mu.Unlock()
	if !flushing {
		c.nn.n.forget(c)
		return c.Conn.Close()
	}
	// The flusher forgets and closes the connection when it is done.
	if tc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		_ = tc.CloseRead()
	}
	return nil
}

// lingerTimeout bounds how long a closed connection keeps trying to send
// its delayed bytes to a peer that does not read them.
const lingerTimeout = 5 * time.Second

// abort closes the connection now, dropping what waits to be sent: a cut
// link or a killed process.
func (c *linkConn) abort() {
	c.nn.n.forget(c)
	c.once.Do(func() { close(c.aborted) })
	c.mu.Lock()
	c.closing = true
	c.space.Broadcast()
	c.mu.Unlock()
	c.Conn.Close()
}
