package broker

import (
	"net"
	"sync"
)

// batchConn sits under a TLS connection and, while writeLoop writes one
// response, gathers the TLS records into a buffer sent with one write:
// Go's TLS writes each record (16 KiB at most) with its own syscall, which
// made socket writes the largest cost of a TLS fetch. Outside a response
// (handshake, alerts, key updates) writes go straight through. Safe for
// concurrent use: crypto/tls may write alerts from other goroutines.
type batchConn struct {
	net.Conn

	mu       sync.Mutex // guards batching and buf
	batching bool
	buf      []byte
}

// batchLimit is how much batchConn gathers before it writes anyway.
const batchLimit = 256 << 10

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.batching {
		return c.Conn.Write(p)
	}
	if len(c.buf)+len(p) > batchLimit {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > batchLimit {
			return c.Conn.Write(p)
		}
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// batchBufs are batchConn's buffers, batchLimit each: a connection holds
// one only while it writes a response.
var batchBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, batchLimit)
	return &b
}}

// begin starts gathering writes.
func (c *batchConn) begin() {
	c.mu.Lock()
	c.batching = true
	c.buf = (*batchBufs.Get().(*[]byte))[:0]
	c.mu.Unlock()
}

// end writes what was gathered, stops gathering and gives the buffer
// back.
func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batching = false
	err := c.flushLocked()
	b := c.buf[:0]
	batchBufs.Put(&b)
	c.buf = nil
	return err
}

func (c *batchConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}
