package wire

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

// A ConnWriter on a TCP connection sends byte chunks and file regions
// (cached ones by raw sendfile, others by the ordinary one, and regions of
// a file without a descriptor by reads) byte for byte as Response.Write
// does, also when the responses are several times larger than the
// socket's send buffer, so the writer waits for room again and again.
func TestConnWriterSendsResponsesWhole(t *testing.T) {
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i*31 + i>>11)
	}
	path := filepath.Join(t.TempDir(), "segment.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := bytes.NewReader(data)

	srv, cli := tcpPair(t)
	if err := srv.SetWriteBuffer(64 << 10); err != nil { // regions of several buffers
		t.Fatal(err)
	}
	w := NewConnWriter(srv)
	if w.raw == nil {
		t.Fatal("no raw writer on a TCP connection")
	}
	type result struct {
		got []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var got []byte
		buf := make([]byte, 64<<10)
		r := NewRawReader(cli)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				done <- result{got: got}
				return
			}
			if err != nil {
				done <- result{err: err}
				return
			}
		}
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	var want bytes.Buffer
	for i := range 30 {
		r := NewResponse(int32(i), i%2 == 0)
		for range rng.IntN(6) + 1 {
			r.SetTail(append(r.Tail(), byte(i), 0xee, byte(rng.Uint32())))
			size := int64([]int{1, 100, 70_000, 400_000}[rng.IntN(4)])
			pos := rng.Int64N(int64(len(data)) - size)
			switch rng.IntN(3) {
			case 0:
				r.AppendFile(f, pos, size, true)
			case 1:
				r.AppendFile(f, pos, size, false)
			default:
				r.AppendFile(mem, pos, size, false)
			}
		}
		r.SetTail(append(r.Tail(), 0))
		r.Finish()
		var m memConn
		if err := r.Write(&m); err != nil {
			t.Fatal(err)
		}
		want.Write(m.Bytes())
		if err := w.Write(r); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
	}
	if err := srv.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if !bytes.Equal(res.got, want.Bytes()) {
		t.Fatalf("read %d bytes, want %d; they differ", len(res.got), want.Len())
	}
}

// A RawReader honours the connection's read deadline, with the error
// net.Conn's Read gives, and reports a peer's close as io.EOF.
func TestRawReaderDeadlineAndEOF(t *testing.T) {
	a, b := tcpPair(t)
	r := NewRawReader(a)
	if _, ok := r.(*RawReader); !ok {
		t.Fatalf("NewRawReader on a TCP connection gave %T", r)
	}
	if err := a.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var ne net.Error
	if _, err := r.Read(make([]byte, 10)); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	_ = a.SetReadDeadline(time.Time{})
	if _, err := b.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v", got, err)
	}
}
