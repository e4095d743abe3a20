package broker

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/wire"
)

// server owns the listener, the connections, the request queue and the
// io handler goroutines.
type server struct {
	b        *Broker
	ln       net.Listener
	requests chan *request // bounded by queued.max.requests
	netSlots chan struct{} // num.network.threads decode slots
	closing  chan struct{}

	wg sync.WaitGroup // every goroutine the server starts

	mu    sync.Mutex // guards conns
	conns map[*conn]struct{}
}

func newServer(b *Broker, ln net.Listener) *server {
	return &server{
		b:        b,
		ln:       ln,
		requests: make(chan *request, b.cfg.QueuedMaxRequests),
		netSlots: make(chan struct{}, b.cfg.NumNetworkThreads),
		closing:  make(chan struct{}),
		conns:    map[*conn]struct{}{},
	}
}

// goTracked starts fn on a goroutine that close waits for.
func (s *server) goTracked(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

func (s *server) start() {
	for i := 0; i < s.b.cfg.NumIOThreads; i++ {
		s.goTracked(s.ioLoop)
	}
	s.goTracked(s.acceptLoop)
}

func (s *server) close() {
	close(s.closing)
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *server) acceptLoop() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closing:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			s.b.log.Error("accept", "err", err)
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			if n := s.b.cfg.SocketSendBufferBytes; n > 0 {
				_ = tc.SetWriteBuffer(n)
			}
			if n := s.b.cfg.SocketReceiveBufferBytes; n > 0 {
				_ = tc.SetReadBuffer(n)
			}
		}
		c := &conn{s: s, nc: nc, out: make(chan *wire.Response, 4), done: make(chan struct{})}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.goTracked(c.writeLoop)
		s.goTracked(c.readLoop)
	}
}

// ioLoop is one of num.io.threads request handlers.
func (s *server) ioLoop() {
	for {
		select {
		case r := <-s.requests:
			s.b.handle(r)
		case <-s.closing:
			return
		}
	}
}

// conn is one client connection.
type conn struct {
	s    *server
	nc   net.Conn
	out  chan *wire.Response // responses, in request order
	done chan struct{}       // closed when the connection is finished
	once sync.Once
}

func (c *conn) shutdown() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
}

// readLoop reads, decodes and queues one request at a time, waiting for
// each to be handled before reading the next.
func (c *conn) readLoop() {
	defer c.shutdown()
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var buf []byte
	idle := time.Duration(c.s.b.cfg.ConnectionsMaxIdleMs) * time.Millisecond
	maxFrame := int32(c.s.b.cfg.SocketRequestMaxBytes)
	for {
		if idle > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(idle))
		}
		frame, err := wire.ReadFrame(br, buf, maxFrame)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.s.b.log.Debug("closing connection", "remote", c.nc.RemoteAddr().String(), "err", err)
			}
			return
		}
		if cap(frame) <= 4<<20 {
			// Reuse buffers up to 4 MiB (a full 1 MiB batch plus its request
			// fits); larger ones go back to the GC.
			buf = frame
		}
		r, err := c.decode(frame)
		if err != nil {
			c.s.b.log.Info("closing connection after a malformed request",
				"remote", c.nc.RemoteAddr().String(), "err", err)
			return
		}
		if r == nil {
			continue // answered during decoding (ApiVersions with an unknown version)
		}
		select {
		case c.s.requests <- r:
		case <-c.done:
			return
		case <-c.s.closing:
			return
		}
		select {
		case <-r.handled:
		case <-c.done:
			return
		case <-c.s.closing:
			return
		}
	}
}

// decode parses a frame into a request while holding a network slot.
func (c *conn) decode(frame []byte) (*request, error) {
	select {
	case c.s.netSlots <- struct{}{}:
	case <-c.s.closing:
		return nil, net.ErrClosed
	}
	defer func() { <-c.s.netSlots }()
	hdr, err := wire.ParseHeaderPrefix(frame)
	if err != nil {
		return nil, err
	}
	api := apiFor(hdr.APIKey)
	if api == nil {
		return nil, errUnknownAPI(hdr.APIKey)
	}
	if hdr.APIVersion < api.min || hdr.APIVersion > api.max {
		if hdr.APIKey == kmsg.ApiVersions.Int16() {
			c.send(apiVersionsUnsupported(hdr.CorrelationID))
			return nil, nil
		}
		return nil, errUnsupportedVersion(hdr)
	}
	kreq := kmsg.RequestForKey(hdr.APIKey)
	hdr, err = wire.ParseRequest(frame, kreq)
	if err != nil {
		return nil, err
	}
	return &request{c: c, hdr: hdr, kreq: kreq, handled: make(chan struct{}), received: time.Now()}, nil
}

func (c *conn) send(resp *wire.Response) {
	select {
	case c.out <- resp:
	case <-c.done:
	}
}

// writeLoop writes responses in order.
func (c *conn) writeLoop() {
	defer c.shutdown()
	for {
		select {
		case resp := <-c.out:
			if err := resp.Write(c.nc); err != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}
