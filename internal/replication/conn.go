package replication

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/wire"
)

// leaderConn is a fetcher's connection to its leader. Requests are written
// and their responses read on the fetcher's own goroutine, one at a time
// (no client goroutines to hand each fetch to and back), and every
// response is read into one buffer reused from fetch to fetch: the record
// batches of a Fetch response are appended straight from it. Not safe for
// concurrent use; close may be called from any goroutine once.
type leaderConn struct {
	nc       net.Conn
	br       *bufio.Reader // a small response arrives with its size in one read
	w        io.Writer     // nc, with raw system calls on plain TCP (wire.NewRawWriter)
	stop     func() bool   // unregisters the close on the fetcher's cancel
	fmt      *kmsg.RequestFormatter
	clientID string
	corr     int32
	wbuf     []byte
	rbuf     []byte
}

// readBufferSize is the connection's read buffer: responses that fit are
// read with their size prefix in one call and copied once into the
// response buffer; larger ones are read into it directly.
const readBufferSize = 64 << 10

// maxResponseSize bounds a response frame, against a corrupt size.
const maxResponseSize = 1 << 30

// dialLeader connects to addr with the fetcher's network, TLS and SASL
// settings. The connection is closed when ctx is cancelled, which ends a
// fetch blocked on it.
func dialLeader(ctx context.Context, cfg *Config, addr string) (*leaderConn, error) {
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: cfg.SocketTimeout}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.SocketTimeout)
	defer cancel()
	nc, err := dial(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial leader %s: %w", addr, err)
	}
	if tc, ok := nc.(interface{ SetReadBuffer(int) error }); ok && cfg.ReceiveBuffer > 0 {
		_ = tc.SetReadBuffer(cfg.ReceiveBuffer) // replica.socket.receive.buffer.bytes
	}
	host, _, _ := net.SplitHostPort(addr)
	if cfg.TLS != nil {
		tcfg := cfg.TLS.Clone()
		if tcfg.ServerName == "" {
			tcfg.ServerName = host
		}
		tc := tls.Client(nc, tcfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with leader %s: %w", addr, err)
		}
		nc = tc
	}
	clientID := fmt.Sprintf("silkworm-replica-fetcher-%d", cfg.NodeID)
	c := &leaderConn{
		nc:       nc,
		br:       bufio.NewReaderSize(wire.NewRawReader(nc), readBufferSize),
		w:        wire.NewRawWriter(nc),
		fmt:      kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		clientID: clientID,
	}
	c.stop = context.AfterFunc(ctx, func() { nc.Close() })
	if cfg.SASL != nil {
		if err := c.authenticate(dctx, cfg, host); err != nil {
			c.close()
			return nil, fmt.Errorf("SASL %s with leader %s: %w", cfg.SASL.Name(), addr, err)
		}
	}
	return c, nil
}

func (c *leaderConn) close() {
	c.stop()
	c.nc.Close()
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate (KIP-152) with
// the configured mechanism.
func (c *leaderConn) authenticate(ctx context.Context, cfg *Config, host string) error {
	deadline, _ := ctx.Deadline()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = cfg.SASL.Name()
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := c.roundTrip(hs, hsResp, deadline); err != nil {
		return err
	}
	if err := kerr.ErrorForCode(hsResp.ErrorCode); err != nil {
		return err
	}
	session, clientWrite, err := cfg.SASL.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	// Every SaslAuthenticate gets an answer; the exchange ends when the
	// mechanism is done and has nothing more to send.
	for done := false; !done || len(clientWrite) > 0; {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(1)
		req.SASLAuthBytes = clientWrite
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		if err := c.roundTrip(req, resp, deadline); err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			if resp.ErrorMessage != nil {
				return fmt.Errorf("%w: %s", err, *resp.ErrorMessage)
			}
			return err
		}
		clientWrite = nil
		if !done {
			if done, clientWrite, err = session.Challenge(resp.SASLAuthBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundTrip sends req and decodes its response into resp: for the rare
// requests (SASL, OffsetForLeaderEpoch); Fetch uses send and receive.
func (c *leaderConn) roundTrip(req kmsg.Request, resp kmsg.Response, deadline time.Time) error {
	if err := c.send(req, deadline); err != nil {
		return err
	}
	body, err := c.receive(req.IsFlexible())
	if err != nil {
		return err
	}
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decode %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	return nil
}

// send writes req with the next correlation id; deadline bounds the
// write and the read of its response.
func (c *leaderConn) send(req kmsg.Request, deadline time.Time) error {
	c.corr++
	c.wbuf = c.fmt.AppendRequest(c.wbuf[:0], req, c.corr)
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := c.w.Write(c.wbuf); err != nil {
		return fmt.Errorf("send %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	return nil
}

// sendWith writes a request of key and version whose body body appends,
// with the next correlation id; deadline bounds the write and the read of
// its response.
func (c *leaderConn) sendWith(key, version int16, flexible bool, deadline time.Time, body func([]byte) []byte) error {
	c.corr++
	b := append(c.wbuf[:0], 0, 0, 0, 0) // size, set below
	b = kbin.AppendInt16(b, key)
	b = kbin.AppendInt16(b, version)
	b = kbin.AppendInt32(b, c.corr)
	b = kbin.AppendNullableString(b, &c.clientID)
	if flexible {
		b = append(b, 0) // header tagged fields
	}
	b = body(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.wbuf = b
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", kmsg.NameForKey(key), err)
	}
	return nil
}

// receive reads the response to the last request sent and returns its
// body, which stays valid until the next receive.
func (c *leaderConn) receive(flexible bool) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.br, size[:]); err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	n := int(int32(binary.BigEndian.Uint32(size[:])))
	if n < 4 || n > maxResponseSize {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	if cap(c.rbuf) < n {
		c.rbuf = make([]byte, n, max(n, 2*cap(c.rbuf)))
	}
	buf := c.rbuf[:n]
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if corr := int32(binary.BigEndian.Uint32(buf)); corr != c.corr {
		return nil, fmt.Errorf("response with correlation id %d to request %d", corr, c.corr)
	}
	r := kbin.Reader{Src: buf[4:]}
	if flexible {
		skipTags(&r)
	}
	if !r.Ok() {
		return nil, errors.New("truncated response header")
	}
	return r.Src, nil
}

// skipTags skips a flexible structure's tagged fields.
func skipTags(r *kbin.Reader) {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}
