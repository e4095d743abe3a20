package wire

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Socket I/O without the runtime's system call bookkeeping.
//
// The data path reads and writes non-blocking TCP sockets: a read, a
// writev, or a sendfile of pages in the page cache returns at once, with
// what it could move or with EAGAIN, and the goroutine then waits in the
// netpoller as net.Conn's would. Issued as raw system calls (without the
// runtime's entersyscall/exitsyscall) they cost the same in the kernel but
// spare the scheduler: the runtime's sysmon thread, asleep while every P
// is idle, is woken by the first ordinary system call after an idle spell
// and then polls every 20 µs until the process is idle again; on a broker
// that is once per request, and where a thread's sleep and wake-up cost
// several microseconds (a virtual machine) that polling took a fifth of
// the broker's CPU. A raw call keeps its P while it runs, so only calls
// that cannot wait go this way: reads and writes of the socket, and
// sendfile of a region the caller marks cached (Chunk.Cached: a region of
// a log's active segment, written moments ago). A region that may have to
// come from the disk is sent with an ordinary sendfile, during which the
// runtime may hand the P to another thread.

// ConnWriter writes Responses to one connection, from one goroutine at a
// time.
type ConnWriter struct {
	conn net.Conn
	raw  *rawConn // nil: not a plain TCP connection (Response.Write)
}

// NewConnWriter returns a writer for conn.
func NewConnWriter(conn net.Conn) *ConnWriter {
	w := &ConnWriter{conn: conn}
	if tc, ok := conn.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			w.raw = newRawConn(rc)
		}
	}
	return w
}

// Write sends r: on a plain TCP connection byte chunks by writev and file
// regions by sendfile, both raw but for regions not marked cached; on any
// other connection as Response.Write does.
func (w *ConnWriter) Write(r *Response) error {
	if w.raw == nil {
		return r.Write(w.conn)
	}
	x := w.raw
	defer x.clear()
	for i := range r.Chunks {
		c := &r.Chunks[i]
		if c.File == nil {
			if len(c.Bytes) > 0 {
				x.bufs = append(x.bufs, c.Bytes)
			}
			continue
		}
		if c.Size == 0 {
			continue
		}
		if err := x.writev(); err != nil {
			return err
		}
		if err := x.region(c); err != nil {
			return err
		}
	}
	return x.writev()
}

// rawConn is a connection's descriptor access with its raw writers. The
// functions the descriptor access calls back are bound once, so that a
// write allocates nothing.
type rawConn struct {
	rc syscall.RawConn

	bufs     [][]byte // writev: what is left to write
	iov      [64]unix.Iovec
	writevFn func(fd uintptr) bool

	src        int   // sendfile: source descriptor,
	off, n     int64 // its offset and what is left to send
	raw        bool  // whether the sendfile may be raw
	sendFn     func(fd uintptr) bool
	fromFileFn func(fd uintptr)
	sendErr    error

	err error // of the last callback
}

func newRawConn(rc syscall.RawConn) *rawConn {
	x := &rawConn{rc: rc, bufs: make([][]byte, 0, 16)}
	x.writevFn = x.writevOnce
	x.sendFn = x.sendOnce
	x.fromFileFn = x.fromFile
	return x
}

func (x *rawConn) clear() {
	clear(x.bufs)
	x.bufs = x.bufs[:0]
}

// writev writes x.bufs, waiting in the netpoller while the socket's send
// buffer is full.
func (x *rawConn) writev() error {
	if len(x.bufs) == 0 {
		return nil
	}
	x.err = nil
	if err := x.rc.Write(x.writevFn); err != nil {
		return err
	}
	x.clear()
	return x.err
}

// writevOnce writes what the socket takes of x.bufs; false: wait until it
// is writable.
func (x *rawConn) writevOnce(fd uintptr) bool {
	for len(x.bufs) > 0 {
		vecs := x.iov[:0]
		for _, b := range x.bufs {
			if len(vecs) == cap(vecs) {
				break
			}
			if len(b) == 0 {
				continue
			}
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			vecs = append(vecs, v)
		}
		if len(vecs) == 0 {
			break
		}
		n, _, e := unix.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&vecs[0])), uintptr(len(vecs)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return x.failed("writev", e)
		}
		x.drop(int64(n))
	}
	x.bufs = x.bufs[:0]
	return true
}

// failed handles a write call's error e: EAGAIN is false (wait until the
// socket is writable), anything else ends the write with an error.
func (x *rawConn) failed(op string, e unix.Errno) bool {
	if e == unix.EAGAIN {
		return false
	}
	x.err = &net.OpError{Op: op, Net: "tcp", Err: e}
	return true
}

// drop removes n written bytes from the front of x.bufs.
func (x *rawConn) drop(n int64) {
	i := 0
	for ; i < len(x.bufs) && n >= int64(len(x.bufs[i])); i++ {
		n -= int64(len(x.bufs[i]))
	}
	if i < len(x.bufs) {
		x.bufs[i] = x.bufs[i][n:]
	}
	k := copy(x.bufs, x.bufs[i:])
	clear(x.bufs[k:])
	x.bufs = x.bufs[:k]
}

// region sends a file region: by sendfile when the file has a descriptor
// (raw when the region is marked cached), else as Response.Write does.
func (x *rawConn) region(c *Chunk) error {
	if f, ok := c.File.(syscall.Conn); ok {
		if src, err := f.SyscallConn(); err == nil {
			x.off, x.n, x.raw, x.sendErr = c.Pos, c.Size, c.Cached, nil
			// Control holds a reference on the file's descriptor for the
			// whole send, so a concurrent Close (a deleted log) waits for
			// it instead of letting the number be reused under us.
			if err := src.Control(x.fromFileFn); err != nil {
				return fmt.Errorf("sendfile source: %w", err)
			}
			return x.sendErr
		}
	}
	return copyRegion(c, rawWriter{x})
}

// fromFile sends the region from the file descriptor src.
func (x *rawConn) fromFile(src uintptr) {
	if !x.raw {
		x.sendErr = sendfile(x.rc, int(src), x.off, x.n)
		return
	}
	x.src, x.err = int(src), nil
	if err := x.rc.Write(x.sendFn); err != nil {
		x.sendErr = err
		return
	}
	x.sendErr = x.err
}

// sendOnce sends what the socket takes of the region; false: wait until
// it is writable.
func (x *rawConn) sendOnce(fd uintptr) bool {
	for x.n > 0 {
		m, _, e := unix.RawSyscall6(unix.SYS_SENDFILE, fd, uintptr(x.src), uintptr(unsafe.Pointer(&x.off)), uintptr(min(x.n, 1<<30)), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return x.failed("sendfile", e)
		}
		if m == 0 {
			x.err = ErrShortFile
			return true
		}
		x.n -= int64(m)
	}
	return true
}

// RawReader reads a plain TCP connection with raw read calls, waiting in
// the netpoller (and honouring the connection's read deadline) when no
// byte is there. It is for one goroutine.
type RawReader struct {
	rc     syscall.RawConn
	p      []byte
	n      int
	err    error
	readFn func(fd uintptr) bool
}

// NewRawReader returns a RawReader for conn, or conn itself when it is not
// a plain TCP connection.
func NewRawReader(conn net.Conn) io.Reader {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	r := &RawReader{rc: rc}
	r.readFn = r.readOnce
	return r
}

func (r *RawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.err = p, 0, nil
	err := r.rc.Read(r.readFn)
	r.p = nil
	if err != nil {
		return r.n, err
	}
	return r.n, r.err
}

// readOnce reads what is there; false: wait until the socket is readable.
func (r *RawReader) readOnce(fd uintptr) bool {
	for {
		m, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.n = int(m)
			if r.n == 0 {
				r.err = io.EOF
			}
			return true
		case unix.EAGAIN:
			return false
		case unix.EINTR:
			continue
		default:
			r.err = &net.OpError{Op: "read", Net: "tcp", Err: e}
			return true
		}
	}
}

// NewRawWriter returns a writer that writes whole buffers to conn with raw
// writev calls when conn is a plain TCP connection (waiting in the
// netpoller, and honouring the write deadline, while the socket's send
// buffer is full), else conn itself. It is for one goroutine.
func NewRawWriter(conn net.Conn) io.Writer {
	w := NewConnWriter(conn)
	if w.raw == nil {
		return conn
	}
	return rawWriter{w.raw}
}

type rawWriter struct{ x *rawConn }

func (w rawWriter) Write(p []byte) (int, error) {
	w.x.bufs = append(w.x.bufs[:0], p)
	if err := w.x.writev(); err != nil {
		return 0, err
	}
	return len(p), nil
}
