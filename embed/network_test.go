package embed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// testLink is a node-1 listener and a connection node 2 dialed to it
// through the cluster network, with the accepted end.
func testLink(t *testing.T, n *network) (dialed, accepted net.Conn) {
	t.Helper()
	port, err := n.reserve(1, "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := newNodeNet(n, 1).Listen("tcp", "127.0.0.1:"+itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(acc)
			return
		}
		acc <- c
	}()
	d, err := newNodeNet(n, 2).DialContext(context.Background(), "tcp", "localhost:"+itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := <-acc
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { d.Close(); a.Close(); n.flushers.Wait() })
	return d, a
}

// A cut closes the connections between the two nodes on both ends and
// refuses new ones; Heal lets them connect again.
func TestNetworkCut(t *testing.T) {
	n := newNetwork(2)
	dialed, accepted := testLink(t, n)
	if dialed.(*linkConn).peer != 1 {
		t.Fatalf("a dial to node 1's port by another host name names peer %d", dialed.(*linkConn).peer)
	}
	n.cut([]int32{1}, []int32{2})
	if _, err := accepted.Read(make([]byte, 1)); err == nil {
		t.Fatal("node 1 still reads from a connection across the cut")
	}
	if _, err := dialed.Write([]byte("x")); err == nil {
		t.Fatal("node 2 still writes on a connection across the cut")
	}
	port := accepted.LocalAddr().(*net.TCPAddr).Port
	_, err := newNodeNet(n, 2).DialContext(context.Background(), "tcp", "127.0.0.1:"+itoa(port))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial across the cut: %v, want connection refused", err)
	}
	n.heal()
	c, err := newNodeNet(n, 2).DialContext(context.Background(), "tcp", "127.0.0.1:"+itoa(port))
	if err != nil {
		t.Fatalf("dial after heal: %v", err)
	}
	c.Close()
}

// With latency the bytes arrive intact, in order, at least the delay
// after they were written; sendfile is off while anything is delayed.
func TestNetworkLatency(t *testing.T) {
	n := newNetwork(2)
	dialed, accepted := testLink(t, n)
	if _, err := dialed.(*linkConn).SyscallConn(); err != nil {
		t.Fatalf("no socket for sendfile without latency: %v", err)
	}
	const d = 50 * time.Millisecond
	n.latency[1].Store(int64(d)) // node 2, the dialing end
	if _, err := dialed.(*linkConn).SyscallConn(); err == nil {
		t.Fatal("socket offered for sendfile while writes are delayed")
	}
	var want []byte
	start := time.Now()
	for i := range 200 {
		b := bytes.Repeat([]byte{byte(i)}, i+1)
		want = append(want, b...)
		if _, err := dialed.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(accepted, got[:1]); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("first byte arrived after %v, latency %v", took, d)
	}
	if _, err := io.ReadFull(accepted, got[1:]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("delayed bytes arrived changed or out of order")
	}
	// Close sends what is still delayed first, as a socket's buffer is.
	n.heal()
	n.latency[1].Store(int64(d))
	dialed.Write([]byte("last"))
	dialed.Close()
	rest, err := io.ReadAll(accepted)
	if err != nil || string(rest) != "last" {
		t.Fatalf("after close read %q, %v", rest, err)
	}
}
