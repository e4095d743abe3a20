package metadata

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The controller listener carries two protocols. A connection's first
// byte says which: connRaft for hashicorp/raft's transport (the rest is
// raft's own framing), connForward for the forwarding RPC (JSON request,
// JSON response, one pair per connection).
const (
	connRaft    byte = 'R'
	connForward byte = 'F'
	// connSession (session.go) is a broker's session with the active
	// controller.
)

// mux is the controller listener: a raft.StreamLayer for the Raft
// transport that hands forwarding connections to the Quorum. Safe for
// concurrent use.
type mux struct {
	ln        net.Listener
	advertise string
	serve     func(net.Conn) // serves one forwarding connection
	session   func(net.Conn) // serves one broker session connection
	spawn     func(func())   // starts a tracked goroutine

	dialTLS *tls.Config // nil: plain TCP to the other nodes
	// acceptAuth and dialAuth authenticate connections (nil: none).
	acceptAuth, dialAuth func(net.Conn) error
	// dialNet opens TCP connections to other nodes (nil: the real network).
	dialNet func(ctx context.Context, network, addr string) (net.Conn, error)

	raftConns chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newMux(ln net.Listener, advertise string, serve func(net.Conn), spawn func(func())) *mux {
	m := &mux{ln: ln, advertise: advertise, serve: serve, spawn: spawn,
		raftConns: make(chan net.Conn), closed: make(chan struct{})}
	return m
}

// acceptLoop accepts connections until Close; run it with spawn.
func (m *mux) acceptLoop() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		m.spawn(func() { m.route(c) })
	}
}

// route authenticates a connection, reads its first byte and hands it on.
func (m *mux) route(c net.Conn) {
	var b [1]byte
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if m.acceptAuth != nil {
		if err := m.acceptAuth(c); err != nil {
			c.Close()
			return
		}
	}
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	switch b[0] {
	case connRaft:
		select {
		case m.raftConns <- c:
		case <-m.closed:
			c.Close()
		}
	case connForward:
		m.serve(c)
	case connSession:
		if m.session == nil {
			c.Close()
			return
		}
		m.session(c)
	default:
		c.Close()
	}
}

// Accept returns the next Raft connection.
func (m *mux) Accept() (net.Conn, error) {
	select {
	case c := <-m.raftConns:
		return c, nil
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

// Close stops the listener; idempotent.
func (m *mux) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.closed)
		err = m.ln.Close()
	})
	return err
}

// Addr is the advertised address, the one in the Raft configuration.
func (m *mux) Addr() net.Addr { return advertisedAddr(m.advertise) }

// Dial opens a Raft connection to another node.
func (m *mux) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := m.dial(string(address), timeout)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte{connRaft}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

type advertisedAddr string

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return string(a) }

// response is the forwarding RPC's answer.
type response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Code   string          `json:"code,omitempty"`
	Msg    string          `json:"msg,omitempty"`
	// Leader is the address of the Raft leader as the answering node
	// knows it, set with Code "not_controller".
	Leader string `json:"leader,omitempty"`
}

// dial connects to another node's controller listener, over TLS when the
// listener uses it.
func (m *mux) dial(addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dial := m.dialNet
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if m.dialTLS != nil {
		cfg := m.dialTLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	if m.dialAuth == nil {
		return c, nil
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := m.dialAuth(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("authenticate to %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// forward sends req to the node at addr and waits for its answer.
func (m *mux) forward(addr string, req *request, timeout time.Duration) (*response, error) {
	c, err := m.dial(addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("dial controller %s: %w", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte{connForward}); err != nil {
		return nil, fmt.Errorf("forward to %s: %w", addr, err)
	}
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, fmt.Errorf("forward to %s: %w", addr, err)
	}
	var resp response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return nil, fmt.Errorf("forward to %s: read answer: %w", addr, err)
	}
	return &resp, nil
}

// serveForward answers one forwarded request on this node's controller.
func (q *Quorum) serveForward(c net.Conn) {
	defer c.Close()
	select {
	case <-q.started:
	case <-q.mux.closed:
		return
	}
	_ = c.SetDeadline(time.Now().Add(q.cfg.RequestTimeout + 5*time.Second))
	var req request
	if err := json.NewDecoder(c).Decode(&req); err != nil {
		q.log.Debug("bad forwarded metadata request", "remote", c.RemoteAddr(), "err", err)
		return
	}
	var resp response
	var val any
	var err error
	if req.Op == opAppliedEpoch {
		val = q.image.Load().Epoch // any node answers, controller or not
	} else {
		val, err = q.ctrl.handle(&req)
	}
	if err != nil {
		resp.Code, resp.Msg = encodeError(err)
		if errors.Is(err, ErrNotController) {
			addr, _ := q.raft.LeaderWithID()
			resp.Leader = string(addr)
		}
	} else if val != nil {
		b, err := json.Marshal(val)
		if err != nil {
			resp.Code, resp.Msg = encodeError(fmt.Errorf("encode answer: %w", err))
		}
		resp.Result = b
	}
	_ = json.NewEncoder(c).Encode(&resp)
}
