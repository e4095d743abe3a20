package broker

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn is a plain TCP connection to a broker for tests that send
// hand-made, often malformed, frames and check the exact answer. It is not
// safe for concurrent use.
type rawConn struct {
	t    *testing.T
	nc   net.Conn
	corr int32
}

// rawDeadline bounds every read on a raw connection; it is a guard against a
// hung test, never an assertion on how long the broker took.
const rawDeadline = 20 * time.Second

// dialRaw opens a fresh connection to addr, closed when the test ends.
func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, rawDeadline)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, corr: 1000}
}

// write sends b as is; the frame size prefix, if any, is the caller's.
func (c *rawConn) write(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(rawDeadline))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write %d bytes: %v", len(b), err)
	}
}

// rawHeader returns a request header (v1: key, version, correlation id,
// client id) for a frame body built by hand.
func rawHeader(key, version int16, corr int32) []byte {
	b := kbin.AppendInt16(nil, key)
	b = kbin.AppendInt16(b, version)
	b = kbin.AppendInt32(b, corr)
	return kbin.AppendNullableString(b, kmsg.StringPtr("badinput"))
}

// encode returns the whole frame of req at the version set on it.
func (c *rawConn) encode(req kmsg.Request) ([]byte, int32) {
	c.corr++
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("badinput"))
	return f.AppendRequest(nil, req, c.corr), c.corr
}

// send writes req at the version set on it and returns its correlation id.
func (c *rawConn) send(req kmsg.Request) int32 {
	c.t.Helper()
	frame, corr := c.encode(req)
	c.write(frame)
	return corr
}

// roundTrip sends req at the version set on it and decodes the answer.
func (c *rawConn) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	corr := c.send(req)
	resp := req.ResponseKind()
	c.readResponse(corr, resp)
	return resp
}

// readResponse reads one response frame and decodes it into resp, whose
// version must be set. The response header has tagged fields for flexible
// versions, except for ApiVersions (always header v0).
func (c *rawConn) readResponse(corr int32, resp kmsg.Response) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(rawDeadline))
	var sz [4]byte
	if _, err := io.ReadFull(c.nc, sz[:]); err != nil {
		c.t.Fatalf("read %s response size: %v", kmsg.NameForKey(resp.Key()), err)
	}
	n := binary.BigEndian.Uint32(sz[:])
	if n < 4 || n > 64<<20 {
		c.t.Fatalf("%s response frame size %d", kmsg.NameForKey(resp.Key()), n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		c.t.Fatalf("read %s response: %v", kmsg.NameForKey(resp.Key()), err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		c.t.Fatalf("%s response: correlation id %d, want %d", kmsg.NameForKey(resp.Key()), got, corr)
	}
	r := kbin.Reader{Src: body[4:]}
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		kmsg.SkipTags(&r)
	}
	if err := resp.ReadFrom(r.Src); err != nil {
		c.t.Fatalf("decode %s v%d response: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
}

// expectClosed waits until the broker closes the connection: a read ends
// in EOF or a reset. Any byte received instead fails the test.
func (c *rawConn) expectClosed(what string) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(rawDeadline))
	var b [512]byte
	n, err := c.nc.Read(b[:])
	switch {
	case n > 0:
		c.t.Fatalf("%s: got %d bytes (% x), want the connection closed", what, n, b[:min(n, 32)])
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
	default:
		c.t.Fatalf("%s: read: %v, want the connection closed (EOF or reset)", what, err)
	}
}
