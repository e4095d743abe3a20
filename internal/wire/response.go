package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FileSource is what a file region is read from: a segment file. When it
// also implements syscall.Conn (an *os.File does) the region is sent with
// sendfile.
type FileSource interface {
	io.ReaderAt
}

// Chunk is one piece of a response: bytes, or a region of a file.
type Chunk struct {
	Bytes []byte
	File  FileSource
	Pos   int64
	Size  int64
	// Cached marks a region whose pages were written recently and are
	// almost surely in the page cache, so that sending it cannot wait for
	// the disk (ConnWriter sends it with a raw sendfile).
	Cached bool
}

// Response is an encoded response: its size prefix, header and body as a
// list of chunks. Build it with NewResponse or the Append helpers, then
// Finish it. A Response is owned by one goroutine at a time.
type Response struct {
	Chunks []Chunk
	size   int64
	// own is the index of the last byte chunk NewResponse or Tail made
	// (when ownValid), whose spare capacity Tail may use.
	own      int
	ownValid bool
}

// EncodeResponse encodes a kmsg response body after a response header for
// correlationID. flexibleHeader selects header v1 (tagged fields); note
// ApiVersions always uses header v0.
func EncodeResponse(correlationID int32, flexibleHeader bool, body kmsg.Response) *Response {
	buf := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(buf[4:], uint32(correlationID))
	if flexibleHeader {
		buf = append(buf, 0)
	}
	buf = body.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return &Response{Chunks: []Chunk{{Bytes: buf}}, size: int64(len(buf))}
}

// NewResponse starts a response that the caller fills with AppendBytes and
// AppendFile, for bodies that carry file regions (Fetch).
func NewResponse(correlationID int32, flexibleHeader bool) *Response {
	return NewResponseCap(correlationID, flexibleHeader, 256, 1)
}

// NewResponseCap is NewResponse with room for about headerBytes bytes of
// header and body outside file regions and for chunks chunks (a byte chunk
// before and after each region), so that a response with many regions
// allocates its buffers once (Fetch sizes them by its partition count).
func NewResponseCap(correlationID int32, flexibleHeader bool, headerBytes, chunks int) *Response {
	buf := make([]byte, 8, max(headerBytes, 16))
	binary.BigEndian.PutUint32(buf[4:], uint32(correlationID))
	if flexibleHeader {
		buf = append(buf, 0)
	}
	r := &Response{Chunks: make([]Chunk, 1, max(chunks, 1)), size: int64(len(buf)), ownValid: true}
	r.Chunks[0].Bytes = buf
	return r
}

// minTailSpare is the least spare room of the previous byte chunk that a
// new byte chunk after a file region takes instead of allocating.
const minTailSpare = 64

// Tail returns the last byte chunk for appending, creating one if the last
// chunk is a file region. A new chunk starts in the spare capacity of the
// byte chunk before the region when there is room: only the last chunk
// ever grows, so the two never overlap, and a response with a region per
// partition allocates for its headers only as its buffer doubles, not
// once per partition.
func (r *Response) Tail() []byte {
	last := &r.Chunks[len(r.Chunks)-1]
	if last.File == nil {
		return last.Bytes
	}
	var b []byte
	for i := len(r.Chunks) - 2; i >= 0; i-- {
		if r.Chunks[i].File != nil {
			continue
		}
		// Only a buffer the Response made is ours to extend: a chunk a
		// caller added may share its array with data in use.
		if prev := r.Chunks[i].Bytes; r.ownValid && i == r.own {
			if spare := prev[len(prev):cap(prev)]; len(spare) >= minTailSpare {
				b = spare[:0]
			}
		}
		break
	}
	if b == nil {
		b = make([]byte, 0, 512)
	}
	r.Chunks = append(r.Chunks, Chunk{Bytes: b})
	r.own, r.ownValid = len(r.Chunks)-1, true
	return b
}

// SetTail replaces the last byte chunk after appending to what Tail gave.
func (r *Response) SetTail(b []byte) {
	last := &r.Chunks[len(r.Chunks)-1]
	r.size += int64(len(b) - len(last.Bytes))
	last.Bytes = b
}

// AppendFile adds a file region to the response; cached: see Chunk.Cached.
func (r *Response) AppendFile(f FileSource, pos, size int64, cached bool) {
	r.Chunks = append(r.Chunks, Chunk{File: f, Pos: pos, Size: size, Cached: cached})
	r.size += size
}

// Finish writes the size prefix. The response must not change afterwards.
func (r *Response) Finish() {
	binary.BigEndian.PutUint32(r.Chunks[0].Bytes, uint32(r.size-4))
}

// Size is the total number of bytes the response occupies on the wire.
func (r *Response) Size() int64 { return r.size }

// ErrShortFile means a file region ended before its announced size; the
// connection must be closed because the frame is already partly written.
var ErrShortFile = errors.New("file region shorter than announced")

// Write sends the response on conn. On a connection with a descriptor (a
// TCP connection) consecutive byte chunks go with one writev and file
// regions with sendfile when the file has a descriptor, else with ReadAt
// and Write. On any other connection (TLS, where the bytes must pass
// through the cipher) the response is copied into a pooled buffer, byte
// chunks and file regions alike, and written a buffer at a time
// (writeCopy).
func (r *Response) Write(conn net.Conn) error {
	if _, ok := conn.(syscall.Conn); !ok {
		return r.writeCopy(conn)
	}
	var bufs net.Buffers
	for i := range r.Chunks {
		c := &r.Chunks[i]
		if c.File == nil {
			if len(c.Bytes) > 0 {
				bufs = append(bufs, c.Bytes)
			}
			continue
		}
		if len(bufs) > 0 {
			if _, err := bufs.WriteTo(conn); err != nil {
				return err
			}
			bufs = bufs[:0]
		}
		if err := writeRegion(conn, c); err != nil {
			return err
		}
	}
	if len(bufs) > 0 {
		if _, err := bufs.WriteTo(conn); err != nil {
			return err
		}
	}
	return nil
}

// copyBufSize is the size of the buffers writeCopy stages a response in:
// 16 TLS records of the maximum size, and few ReadAt calls per MiB of
// file region.
const copyBufSize = 256 << 10

// copyBufs holds writeCopy's staging buffers (*[]byte of copyBufSize), so
// that a response with file regions allocates none: a connection holds one
// only while it writes.
var copyBufs = sync.Pool{New: func() any {
	b := make([]byte, copyBufSize)
	return &b
}}

// writeCopy writes the response to w through a pooled buffer: the small
// byte chunks between file regions (response and partition headers) are
// coalesced with the region data, so that a TLS connection sends a few
// full records instead of a small record per chunk, and regions are read
// into the buffer instead of into one allocated per region. A response
// that is a single byte chunk is written as it is.
func (r *Response) writeCopy(w io.Writer) error {
	if len(r.Chunks) == 1 && r.Chunks[0].File == nil {
		if len(r.Chunks[0].Bytes) == 0 {
			return nil
		}
		_, err := w.Write(r.Chunks[0].Bytes)
		return err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := (*bp)[:0]
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	for i := range r.Chunks {
		c := &r.Chunks[i]
		if c.File == nil {
			b := c.Bytes
			if len(b) >= copyBufSize {
				// Too big to gain from the copy: write it as it is.
				if err := flush(); err != nil {
					return err
				}
				if _, err := w.Write(b); err != nil {
					return err
				}
				continue
			}
			if len(b) > cap(buf)-len(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
			buf = append(buf, b...)
			continue
		}
		pos, left := c.Pos, c.Size
		for left > 0 {
			if len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
			n := int(min(int64(cap(buf)-len(buf)), left))
			m, err := c.File.ReadAt(buf[len(buf):len(buf)+n], pos)
			if m < n {
				if err == nil || err == io.EOF {
					err = ErrShortFile
				}
				return err
			}
			buf = buf[:len(buf)+n]
			pos += int64(n)
			left -= int64(n)
		}
	}
	return flush()
}

func writeRegion(conn net.Conn, c *Chunk) error {
	if c.Size == 0 {
		return nil
	}
	if f, ok := c.File.(syscall.Conn); ok {
		if sc, ok := conn.(syscall.Conn); ok {
			src, err1 := f.SyscallConn()
			dst, err2 := sc.SyscallConn()
			if err1 == nil && err2 == nil {
				// Control holds a reference on the file's descriptor for the
				// whole send, so a concurrent Close (a deleted log) waits for
				// it instead of letting the number be reused under us.
				var serr error
				if err := src.Control(func(fd uintptr) {
					serr = sendfile(dst, int(fd), c.Pos, c.Size)
				}); err != nil {
					return fmt.Errorf("sendfile source: %w", err)
				}
				return serr
			}
		}
	}
	return copyRegion(c, conn)
}

// copyRegion sends a region of a file without a descriptor: read into a
// buffer and written, a piece at a time.
func copyRegion(c *Chunk, w io.Writer) error {
	buf := make([]byte, min(c.Size, 256<<10))
	pos, left := c.Pos, c.Size
	for left > 0 {
		n := min(int64(len(buf)), left)
		m, err := c.File.ReadAt(buf[:n], pos)
		if int64(m) < n {
			if err == nil || err == io.EOF {
				err = ErrShortFile
			}
			return err
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		pos += n
		left -= n
	}
	return nil
}

func sendfile(rc syscall.RawConn, src int, off, n int64) error {
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for n > 0 {
			m, e := unix.Sendfile(int(fd), src, &off, int(min(n, 1<<30)))
			if m > 0 {
				n -= int64(m)
			}
			switch {
			case e == unix.EAGAIN:
				return false // wait until the socket is writable
			case e == unix.EINTR:
				continue
			case e != nil:
				werr = fmt.Errorf("sendfile: %w", e)
				return true
			case m == 0:
				werr = ErrShortFile
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
