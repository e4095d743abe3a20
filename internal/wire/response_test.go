package wire

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

type memConn struct {
	bytes.Buffer
	writes int
	failAt int
}

func (c *memConn) Write(p []byte) (int, error) {
	c.writes++
	if c.failAt > 0 && c.writes >= c.failAt {
		return 0, errors.New("boom")
	}
	return c.Buffer.Write(p)
}
func (c *memConn) Read([]byte) (int, error)         { return 0, nil }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return nil }
func (c *memConn) RemoteAddr() net.Addr             { return nil }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

func TestWriteCopyMatchesChunks(t *testing.T) {
	file := make([]byte, 3<<20)
	for i := range file {
		file[i] = byte(i * 7)
	}
	f := bytes.NewReader(file)
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		r := NewResponse(int32(iter), iter%2 == 0)
		var want []byte
		want = append(want, r.Chunks[0].Bytes...)
		n := rng.IntN(8)
		for j := 0; j < n; j++ {
			switch rng.IntN(3) {
			case 0:
				size := []int{0, 1, 100, copyBufSize - 1, copyBufSize, copyBufSize + 5, 1 << 20}[rng.IntN(7)]
				pos := rng.Int64N(int64(len(file) - size))
				r.AppendFile(f, pos, int64(size), false)
				want = append(want, file[pos:pos+int64(size)]...)
			case 1:
				size := []int{1, 10, 1000, copyBufSize - 3, copyBufSize, copyBufSize * 2}[rng.IntN(6)]
				b := make([]byte, size)
				for k := range b {
					b[k] = byte(rng.Uint32())
				}
				r.Chunks = append(r.Chunks, Chunk{Bytes: b})
				r.size += int64(size)
				want = append(want, b...)
			default:
				tail := r.Tail()
				tail = append(tail, byte(j), byte(iter))
				r.SetTail(tail)
				want = append(want, byte(j), byte(iter))
			}
		}
		r.Finish()
		copy(want, r.Chunks[0].Bytes[:4])
		var c memConn
		if err := r.Write(&c); err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		if !bytes.Equal(c.Bytes(), want) {
			t.Fatalf("iter %d: wrote %d bytes, want %d, differ", iter, c.Len(), len(want))
		}
		if int64(c.Len()) != r.Size() {
			t.Fatalf("iter %d: size %d, wrote %d", iter, r.Size(), c.Len())
		}
	}
}

func TestWriteCopyShortFile(t *testing.T) {
	r := NewResponse(1, false)
	r.AppendFile(bytes.NewReader(make([]byte, 1000)), 500, 600, false)
	r.Finish()
	var c memConn
	if err := r.Write(&c); !errors.Is(err, ErrShortFile) {
		t.Fatalf("err %v", err)
	}
}

func TestWriteCopyWriteError(t *testing.T) {
	r := NewResponse(1, false)
	r.AppendFile(bytes.NewReader(make([]byte, 1<<20)), 0, 1<<20, false)
	r.Finish()
	c := memConn{failAt: 2}
	if err := r.Write(&c); err == nil || err.Error() != "boom" {
		t.Fatalf("err %v", err)
	}
}

func TestWriteCopyCoalesces(t *testing.T) {
	r := NewResponse(1, true)
	r.AppendFile(bytes.NewReader(make([]byte, 20000)), 0, 16000, false)
	r.SetTail(append(r.Tail(), 1, 2, 3))
	r.AppendFile(bytes.NewReader(make([]byte, 20000)), 0, 100, false)
	r.SetTail(append(r.Tail(), 4))
	r.Finish()
	var c memConn
	if err := r.Write(&c); err != nil {
		t.Fatal(err)
	}
	if c.writes != 1 {
		t.Fatalf("%d writes", c.writes)
	}
}

// TestResponseHeadersShareABuffer: the byte chunks between file regions
// (a Fetch response's partition headers) are carved from one growing
// buffer, so a response with a region per partition allocates for them a
// few times as it grows, not once per partition, and the bytes written are
// still each chunk's own.
func TestResponseHeadersShareABuffer(t *testing.T) {
	file := bytes.NewReader(bytes.Repeat([]byte("r"), 1000))
	const parts = 100
	headers := make([][]byte, parts)
	for i := range headers {
		headers[i] = bytes.Repeat([]byte{byte(i)}, 40)
	}
	build := func() *Response {
		r := NewResponse(7, true)
		for i := range parts {
			r.SetTail(append(r.Tail(), headers[i]...))
			r.AppendFile(file, int64(i), 3, false)
		}
		r.SetTail(append(r.Tail(), 0))
		r.Finish()
		return r
	}
	if n := testing.AllocsPerRun(10, func() { build() }); n > 20 {
		t.Errorf("a response of %d file regions allocates %.0f times, want at most 20", parts, n)
	}
	r := build()
	var want []byte
	want = append(want, r.Chunks[0].Bytes[:9]...) // size, correlation id, header tags
	for i := range parts {
		want = append(want, bytes.Repeat([]byte{byte(i)}, 40)...)
		want = append(want, "rrr"...)
	}
	want = append(want, 0)
	var c memConn
	if err := r.Write(&c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Bytes(), want) {
		t.Fatalf("wrote %d bytes, want %d: chunks overlap", c.Len(), len(want))
	}
}
