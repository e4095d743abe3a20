package broker

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
	"github.com/silkworm/silkworm/internal/wire"
)

// server owns the listeners, the connections, the request queue and the
// io handler goroutines.
type server struct {
	b        *Broker
	lns      []*boundListener
	requests chan *request // bounded by queued.max.requests
	netSlots chan struct{} // num.network.threads decode slots
	ioSlots  chan struct{} // num.io.threads handler slots (ioLoop, and produce on a reader)
	closing  chan struct{}

	wg sync.WaitGroup // every goroutine the server starts

	mu    sync.Mutex // guards conns
	conns map[*conn]struct{}
}

// boundListener is one open listener and how it authenticates.
type boundListener struct {
	ln  net.Listener
	sec *listenerSec
}

func newServer(b *Broker, lns []*boundListener) *server {
	return &server{
		b:        b,
		lns:      lns,
		requests: make(chan *request, b.cfg.QueuedMaxRequests),
		netSlots: make(chan struct{}, b.cfg.NumNetworkThreads),
		ioSlots:  make(chan struct{}, b.cfg.NumIOThreads),
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
	for _, bl := range s.lns {
		s.goTracked(func() { s.acceptLoop(bl) })
	}
}

func (s *server) close() {
	close(s.closing)
	for _, bl := range s.lns {
		bl.ln.Close()
		bl.sec.close()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *server) acceptLoop(bl *boundListener) {
	for {
		nc, err := bl.ln.Accept()
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
			s.b.log.Error("accept", "listener", bl.sec.name, "err", err)
			return
		}
		if tc, ok := nc.(socketBuffers); ok {
			if n := s.b.cfg.SocketSendBufferBytes; n > 0 {
				_ = tc.SetWriteBuffer(n)
			}
			if n := s.b.cfg.SocketReceiveBufferBytes; n > 0 {
				_ = tc.SetReadBuffer(n)
			}
		}
		c := &conn{s: s, nc: nc, ls: bl.sec, host: hostOf(nc.RemoteAddr()), principal: security.Anonymous,
			out: make(chan *wire.Response, connQueue), written: make(chan struct{}, 1), next: make(chan struct{}, 1),
			done: make(chan struct{})}
		if bl.sec.usesSASL() {
			c.sasl = saslStart
		}
		if bl.sec.usesTLS() {
			c.batch = &batchConn{Conn: nc}
			c.nc = tls.Server(c.batch, bl.sec.tls.Load().Config())
		}
		c.w = wire.NewConnWriter(c.nc)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.b.metrics.connectionCreated(bl.sec.name)
		s.goTracked(c.writeLoop)
		s.goTracked(c.readLoop)
	}
}

// socketBuffers is what a connection offers to size its kernel buffers:
// a *net.TCPConn, or a wrapper of one (an embedded cluster's network).
type socketBuffers interface {
	SetReadBuffer(bytes int) error
	SetWriteBuffer(bytes int) error
}

// ioLoop is one of num.io.threads request handlers. It holds a handler
// slot while it runs one, so that together with the produce requests
// handled on their readers (conn.dispatch) no more than num.io.threads
// handlers run at a time.
func (s *server) ioLoop() {
	for {
		select {
		case r := <-s.requests:
			select {
			case s.ioSlots <- struct{}{}:
			case <-s.closing:
				return
			}
			s.b.handle(r)
			<-s.ioSlots
		case <-s.closing:
			return
		}
	}
}

// conn is one client connection.
//
// The authentication fields are written by the SaslHandshake and
// SaslAuthenticate handlers (io goroutines) before they answer, and read
// by readLoop after the answer: readLoop waits for each request to be
// released (answered, or for a produce parked on the ISR after its append)
// before it reads the next, which orders the two.
type conn struct {
	s    *server
	nc   net.Conn
	ls   *listenerSec
	host string // peer IP, for ACLs

	principal   security.Principal
	sasl        saslState     // where the connection is in Kafka's SASL state machine
	saslMech    string        // mechanism chosen by SaslHandshake
	saslSession sasl.Session  // exchange in progress
	saslRaw     bool          // SaslHandshake v0: tokens follow without Kafka framing
	saslExpiry  time.Time     // KIP-368 session end; zero = none
	reauthBad   string        // a re-authentication asked for another mechanism than this one
	mutedUntil  atomic.Int64  // quota throttle (KIP-219): read nothing before it (unix ns)
	closeAfter  bool          // the last response is queued: close once it is written
	written     chan struct{} // writeLoop signals each response written, deliver each flush
	next        chan struct{} // request.release signals readLoop that it may read on
	seq         sequencer     // requests read and not yet on out, in request order
	batch       *batchConn    // under the TLS connection: one write per response
	timing      timingQueue   // queued responses' requests, for request metrics (metrics_request.go)

	out chan *wire.Response // responses, in request order
	// wmu is held while a response is written to nc, by writeLoop or by
	// deliver writing an answer inline; w is the writer it uses.
	wmu sync.Mutex
	w   *wire.ConnWriter
	// unsent counts the responses queued on out or being written inline,
	// not yet written. It grows only under seq.mu, so deliver, holding
	// that lock, may write inline when it is 0: no earlier answer waits.
	unsent atomic.Int32
	done   chan struct{} // closed when the connection is finished
	once   sync.Once
}

func (c *conn) shutdown() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
		c.s.b.metrics.connectionClosed(c.ls.name)
	})
}

// saslState is Kafka's SaslServerAuthenticator state machine, as far as it
// decides which requests a connection may send.
type saslState int

const (
	saslDone             saslState = iota // not a SASL listener, or authenticated: everything
	saslStart                             // ApiVersions (once) or SaslHandshake
	saslAfterVersions                     // SaslHandshake only
	saslAuthenticating                    // SaslAuthenticate only (v0: unframed tokens)
	saslReauthenticating                  // authenticated, re-authenticating: SaslAuthenticate only
)

// authenticated reports whether the connection may send any request.
func (c *conn) authenticated() bool {
	return c.sasl == saslDone || c.sasl == saslReauthenticating
}

// tlsHandshakeTimeout bounds a client's TLS handshake.
const tlsHandshakeTimeout = 10 * time.Second

// handshake completes TLS on an SSL or SASL_SSL connection and takes the
// principal from the client certificate on SSL.
func (c *conn) handshake() error {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.s.b.log.Info("TLS handshake failed", "listener", c.ls.name, "remote", c.nc.RemoteAddr().String(), "err", err)
		c.s.b.countFailedAuthentication()
		return err
	}
	if c.ls.protocol == protoSSL {
		p, err := c.ls.tlsPrincipal(tc.ConnectionState().PeerCertificates)
		if err != nil {
			c.s.b.log.Info("no principal for the client certificate", "remote", c.nc.RemoteAddr().String(), "err", err)
			c.s.b.countFailedAuthentication()
			return err
		}
		c.principal = p
	}
	return nil
}

// readLoop reads, decodes and dispatches one request at a time. Before it
// reads the next frame it waits until the request is released: answered,
// or, for an acks=all produce, appended and waiting only for the ISR
// (pipelining: the client's next produce is read and appended meanwhile).
// Answers leave in request order whatever order they come in (deliver).
//
// A frame is read into the connection's buffer (kept up to
// connBufferMax) or, when larger, into a pooled one; the reader reuses it
// for the next frame once the request is released, so no buffer is
// allocated or zeroed per request.
func (c *conn) readLoop() {
	defer c.shutdown()
	if err := c.handshake(); err != nil {
		return
	}
	fr := wire.NewFrameReader(wire.NewRawReader(c.nc), frameReadBuffer)
	var own []byte     // the connection's buffer
	var pooled *[]byte // the last frame's, when it came from framePool
	var last *request  // the last request read
	defer func() {
		// A request not yet released may still be reading its frame.
		if pooled != nil && (last == nil || last.released.Load()) {
			putFrameBuffer(pooled)
		}
	}()
	idle := time.Duration(c.s.b.cfg.ConnectionsMaxIdleMs) * time.Millisecond
	for {
		if !c.waitMuted() || !c.waitQueue() {
			return
		}
		if idle > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(idle))
		}
		maxFrame := int32(c.s.b.cfg.SocketRequestMaxBytes)
		if !c.authenticated() {
			// An unauthenticated peer makes the broker allocate no more
			// than sasl.server.max.receive.size (Kafka's bound).
			maxFrame = min(maxFrame, c.ls.maxReceive)
		}
		n, err := fr.ReadSize(maxFrame)
		var frame []byte
		if err == nil {
			if pooled != nil {
				putFrameBuffer(pooled)
				pooled = nil
			}
			if n <= connBufferMax {
				if cap(own) < n {
					own = make([]byte, frameBufferSize(n))
				}
				frame = own[:n]
			} else {
				pooled = getFrameBuffer(n)
				frame = (*pooled)[:n]
			}
			err = fr.ReadBody(frame)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.s.b.log.Debug("closing connection", "remote", c.nc.RemoteAddr().String(), "err", err)
			}
			return
		}
		if c.saslRaw {
			if !c.saslRawToken(frame) {
				return
			}
			continue
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
		if !c.admit(r) {
			if c.sasl == saslAuthenticating || c.sasl == saslReauthenticating {
				// Kafka's SaslServerAuthenticator answers a request other
				// than SaslAuthenticate during the exchange with that
				// request's error response (ILLEGAL_SASL_STATE), then
				// closes; writeLoop closes once the answer is out.
				last = r
				c.seq.add(r)
				r.respondAndClose(errorResponse(r.kreq, kerr.IllegalSaslState.Code))
				select {
				case <-c.done:
				case <-c.s.closing:
				case <-time.After(10 * time.Second):
				}
			}
			return
		}
		last = r
		c.seq.add(r)
		if !c.dispatch(r) {
			return
		}
		select {
		case <-c.next:
		case <-c.done:
			return
		case <-c.s.closing:
			return
		}
		if c.closeAfter {
			// writeLoop closes the connection once the last response
			// is out; closing here could cut it off.
			select {
			case <-c.done:
			case <-c.s.closing:
			case <-time.After(10 * time.Second):
			}
			return
		}
	}
}

// dispatch hands a decoded request to a handler. A produce or fetch
// request runs on the reader itself when a handler slot is free at once:
// it needs no wait before it is answered or parked (a transactional
// produce to verify, an acks=all produce waiting for the ISR and a fetch
// waiting for data continue on their own goroutines), and so the request
// costs no hand-off to an io goroutine. Its answer is written inline too
// when no earlier answer waits (deliver), so it costs no wake of writeLoop
// either: a third less broker CPU per 100 B record produced in 16 KiB
// batches, about 15 % less per 1 KiB record consumed.
// Everything else, and a produce while every slot is taken, goes on the
// request queue. It reports false when the connection or server closed.
func (c *conn) dispatch(r *request) bool {
	if k := r.hdr.APIKey; k == kmsg.Produce.Int16() || k == kmsg.Fetch.Int16() {
		select {
		case c.s.ioSlots <- struct{}{}:
			r.writeInline = true
			c.s.b.handle(r)
			<-c.s.ioSlots
			return true
		default:
		}
		// A follower's fetch never waits for a handler: what the handlers
		// wait for (the ISR to have a write) may be the data it fetches. It
		// does not block either: when it must wait, it parks on its own
		// goroutine.
		if k == kmsg.Fetch.Int16() && fetchReplicaID(r) >= 0 {
			r.writeInline = true
			c.s.b.handle(r)
			return true
		}
	}
	select {
	case c.s.requests <- r:
		return true
	case <-c.done:
		return false
	case <-c.s.closing:
		return false
	}
}

// connQueue is how many responses a connection may have waiting: queued
// for writeLoop, or answered or pipelined behind an earlier request still
// waiting for its answer. readLoop reads no request while that nears the
// bound, so a handler never blocks on a client that does not read (which
// would pin an io thread) and pipelining stays bounded.
const connQueue = 8

// Frame buffers (readLoop).
const (
	frameReadBuffer = 64 << 10 // the read buffer small frames come through
	connBufferMax   = 4 << 20  // largest buffer a connection keeps (a 1 MiB batch and more fit)
)

// waitQueue waits until the connection has room for the answer to the
// next request (two entries: respondAndClose queues a response and the
// close). It reports false when the connection or server closed.
func (c *conn) waitQueue() bool {
	for c.queued() > connQueue-2 {
		select {
		case <-c.written:
		case <-c.done:
			return false
		case <-c.s.closing:
			return false
		}
	}
	return true
}

// sequencer keeps a connection's requests in the order they were read
// until their answers are queued for writeLoop, so that answers leave in
// request order though handlers answer in any order: a pipelined produce
// waits for the ISR while later requests are answered. It is safe for
// concurrent use.
type sequencer struct {
	mu sync.Mutex
	q  []*request // oldest first
}

// add appends r, read by readLoop, behind the connection's earlier
// requests.
func (sq *sequencer) add(r *request) {
	sq.mu.Lock()
	r.ordered = true
	sq.q = append(sq.q, r)
	sq.mu.Unlock()
}

// queued is how many responses the connection has waiting: in the
// sequencer and queued for writeLoop. Both are counted under the
// sequencer's lock, which deliver holds while it moves answers from one
// to the other, so none is missed.
func (c *conn) queued() int {
	c.seq.mu.Lock()
	defer c.seq.mu.Unlock()
	return len(c.seq.q) + len(c.out)
}

// sendInOrder queues resp, an answer readLoop gives without a request
// (an unsupported ApiVersions, a raw SASL token), behind the answers to
// the connection's earlier requests.
func (c *conn) sendInOrder(resp *wire.Response) {
	r := &request{c: c}
	c.seq.add(r)
	c.deliver(r, resp, false)
}

// deliver records the answer to r (resp nil: none; last: close the
// connection once resp is written) and queues for writeLoop every answer
// that no earlier unanswered request holds back, in request order. A
// request not read by readLoop (a benchmark's bare conn) is queued at
// once. The queue has room for what is flushed: readLoop bounds the
// requests in flight (waitQueue).
func (c *conn) deliver(r *request, resp *wire.Response, last bool) {
	if !r.ordered {
		if resp != nil {
			r.answered(resp)
			c.unsent.Add(1)
			c.send(resp)
		}
		if last {
			c.send(nil)
		}
		return
	}
	sq := &c.seq
	sq.mu.Lock()
	r.resp, r.last, r.ready = resp, last, true
	// An answer that may be written inline is, when nothing written
	// before it waits (unsent is 0) and the writer lock is free: that
	// saves waking writeLoop. The writer lock is taken before seq.mu is
	// let go, so answers queued for writeLoop meanwhile wait their turn.
	inline := r.writeInline && c.w != nil && c.unsent.Load() == 0 && c.wmu.TryLock()
	var buf [4]*wire.Response
	direct := buf[:0]
	n := 0
	for n < len(sq.q) && sq.q[n].ready {
		h := sq.q[n]
		if h.resp != nil {
			h.answered(h.resp) // metrics: in the order writeLoop takes them
			c.unsent.Add(1)
			if inline && !h.last {
				direct = append(direct, h.resp)
			} else {
				c.send(h.resp)
			}
		}
		if h.last {
			c.send(nil)
		}
		h.resp = nil
		n++
	}
	if n > 0 {
		// A handful of entries at most: shift, keeping the backing array.
		m := copy(sq.q, sq.q[n:])
		clear(sq.q[m:])
		sq.q = sq.q[:m]
	}
	sq.mu.Unlock()
	if inline {
		c.writeLocked(direct)
		c.wmu.Unlock()
	}
	if n > 0 {
		select {
		case c.written <- struct{}{}:
		default:
		}
	}
}

// writeLocked writes resps, in order, with wmu held, and counts each
// written; a failed write closes the connection.
func (c *conn) writeLocked(resps []*wire.Response) {
	for _, resp := range resps {
		if err := c.write(resp); err != nil {
			c.shutdown()
			return
		}
	}
}

// write writes one response (wmu held) and records it for the request
// metrics.
func (c *conn) write(resp *wire.Response) error {
	sent := c.responseDequeued(resp)
	if c.batch != nil {
		c.batch.begin()
	}
	err := c.w.Write(resp)
	if c.batch != nil {
		err = errors.Join(err, c.batch.end())
	}
	c.unsent.Add(-1)
	if err == nil {
		sent.written()
	}
	return err
}

// frameBufferSize is the size of the connection buffer for a frame of n
// bytes (0 < n <= connBufferMax): n rounded up to an eighth of the next
// power of two, so that frames of slightly varying sizes (one producer's
// batches) settle on one buffer without doubling it.
func frameBufferSize(n int) int {
	step := max((1<<bits.Len(uint(n-1)))/8, 512)
	return min((n+step-1)/step*step, connBufferMax)
}

// framePool holds buffers for frames above connBufferMax, by size class
// (powers of two from 8 MiB to 128 MiB); larger frames get a buffer of
// their own. Pooled buffers are neither zeroed nor paged in again per
// request, and the GC drops those no connection used for two cycles.
var framePool [5]sync.Pool

const framePoolMinShift = 23 // 8 MiB

func framePoolClass(n int) int {
	return bits.Len(uint(n-1)) - framePoolMinShift
}

// getFrameBuffer returns a buffer of at least n bytes (n > connBufferMax).
func getFrameBuffer(n int) *[]byte {
	c := framePoolClass(n)
	if c < 0 || c >= len(framePool) {
		b := make([]byte, n)
		return &b
	}
	if b, ok := framePool[c].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 1<<(c+framePoolMinShift))
	return &b
}

// putFrameBuffer returns a buffer from getFrameBuffer to its pool.
func putFrameBuffer(b *[]byte) {
	n := cap(*b)
	if c := framePoolClass(n); c >= 0 && c < len(framePool) && n == 1<<(c+framePoolMinShift) {
		framePool[c].Put(b)
	}
}

// waitMuted waits out a quota throttle before the next read (the
// connection is muted, KIP-219). It reports false when the connection or
// the server closed meanwhile.
func (c *conn) waitMuted() bool {
	until := c.mutedUntil.Load()
	if until == 0 {
		return true
	}
	d := time.Until(time.Unix(0, until))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	case <-c.s.closing:
		return false
	}
}

// admit applies Kafka's SASL state machine to a decoded request: before
// authentication one ApiVersions, then SaslHandshake, then only
// SaslAuthenticate; during a re-authentication only SaslAuthenticate; a
// connection whose session expired (KIP-368) is closed unless it starts a
// re-authentication. It records the principal the request runs as, and
// reports false when the connection must be closed.
func (c *conn) admit(r *request) bool {
	key := kmsg.Key(r.hdr.APIKey)
	r.principal = c.principal
	ok := true
	switch c.sasl {
	case saslStart:
		switch key {
		case kmsg.ApiVersions:
			c.sasl = saslAfterVersions
		case kmsg.SASLHandshake:
		default:
			ok = false
		}
	case saslAfterVersions:
		ok = key == kmsg.SASLHandshake
	case saslAuthenticating, saslReauthenticating:
		ok = key == kmsg.SASLAuthenticate
	case saslDone:
		if !c.saslExpiry.IsZero() && time.Now().After(c.saslExpiry) && key != kmsg.SASLHandshake {
			c.s.b.log.Info("closing connection: SASL session expired (connections.max.reauth.ms)",
				"remote", c.nc.RemoteAddr().String(), "principal", c.principal.String())
			return false
		}
	}
	if !ok {
		c.s.b.log.Info("closing connection: unexpected request during SASL authentication",
			"remote", c.nc.RemoteAddr().String(), "api", kmsg.NameForKey(r.hdr.APIKey))
	}
	return ok
}

// saslRawToken serves one unframed SASL token after a v0 SaslHandshake:
// the token goes to the mechanism and its answer goes back size-prefixed.
// It reports false when the connection must be closed (a failed
// authentication: v0 has no way to carry an error).
func (c *conn) saslRawToken(tok []byte) bool {
	out, done, err := c.saslSession.Step(tok)
	if err != nil {
		c.s.b.log.Info("SASL authentication failed", "listener", c.ls.name, "mechanism", c.saslMech,
			"remote", c.nc.RemoteAddr().String(), "err", err)
		c.s.b.countFailedAuthentication()
		return false
	}
	frame := make([]byte, 4+len(out))
	binary.BigEndian.PutUint32(frame, uint32(len(out)))
	copy(frame[4:], out)
	if done {
		if err := c.finishSASL(); err != nil {
			return false
		}
	}
	c.sendInOrder(&wire.Response{Chunks: []wire.Chunk{{Bytes: frame}}})
	return true
}

// finishSASL records a completed exchange: the principal, the session's
// end (KIP-368) and that requests may flow. It returns the session
// lifetime to report, or an error when a re-authentication tried to change
// the principal (Kafka refuses that).
func (c *conn) finishSASL() error {
	p := c.saslSession.Principal()
	if c.sasl == saslReauthenticating && p != c.principal {
		return errors.New("Cannot change principals during re-authentication from " + c.principal.String() + ": " + p.String())
	}
	c.principal = p
	c.sasl = saslDone
	c.saslRaw = false
	c.saslExpiry = time.Time{}
	if life := sessionLifetime(c.ls.reauthFor(c.saslMech), c.saslSession.Expiry(), time.Now()); life > 0 {
		c.saslExpiry = time.Now().Add(life)
	}
	c.saslSession = nil
	return nil
}

// sessionLifetime is Kafka's rule for a SASL session: the smaller of
// connections.max.reauth.ms and the credential's remaining life, where
// either is set; zero means unlimited.
func sessionLifetime(maxReauth time.Duration, expiry, now time.Time) time.Duration {
	switch {
	case expiry.IsZero():
		return max(maxReauth, 0)
	case maxReauth <= 0:
		return max(expiry.Sub(now), time.Millisecond)
	default:
		return max(min(expiry.Sub(now), maxReauth), time.Millisecond)
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
	defer c.s.b.metrics.networkBusySince(nanotime())
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
			c.sendInOrder(apiVersionsUnsupported(hdr.CorrelationID))
			return nil, nil
		}
		return nil, errUnsupportedVersion(hdr)
	}
	kreq := kmsg.RequestForKey(hdr.APIKey)
	hdr, err = wire.ParseRequest(frame, kreq)
	if err != nil {
		return nil, err
	}
	return &request{c: c, hdr: hdr, kreq: kreq, size: len(frame), received: time.Now()}, nil
}

func (c *conn) send(resp *wire.Response) {
	select {
	case c.out <- resp:
	case <-c.done:
	}
}

// writeLoop writes responses in order. A response queued by closeAfterSend
// is the last: the connection closes once it is written.
func (c *conn) writeLoop() {
	defer c.shutdown()
	for {
		select {
		case resp := <-c.out:
			if resp == nil {
				return
			}
			c.wmu.Lock()
			err := c.write(resp)
			c.wmu.Unlock()
			if err != nil {
				return
			}
			select {
			case c.written <- struct{}{}:
			default:
			}
		case <-c.done:
			return
		}
	}
}
