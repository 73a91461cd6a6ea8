package proxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (client, server net.Conn) {
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
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// The front's socket I/O reads and writes as net.Conn does: what the peer
// sent, large writes whole (waiting for room), io.EOF at the end, the
// deadline's error when it passes, net.ErrClosed once closed, and a read
// and a write at once (watchClient reads while the relay writes).
func TestSockIOBehavesAsTheConn(t *testing.T) {
	t.Parallel()
	a, b := tcpPair(t)
	rw := connIO(a, newSockIO(a))

	// A large write in both directions at once, each side reading the
	// other's: neither fits in the socket buffers, so both wait for room.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
	errc := make(chan error, 2)
	got := make(chan []byte, 1)
	go func() { _, err := b.Write(big); errc <- err }()
	go func() { _, err := rw.Write(big); errc <- err }()
	go func() { buf, _ := io.ReadAll(io.LimitReader(b, int64(len(big)))); got <- buf }()
	var mine bytes.Buffer
	if _, err := io.CopyN(&mine, rw, int64(len(big))); err != nil {
		t.Fatalf("read through socket I/O: %v", err)
	}
	for range 2 {
		if err := <-errc; err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	if !bytes.Equal(mine.Bytes(), big) || !bytes.Equal(<-got, big) {
		t.Fatal("bytes differ after a round trip through socket I/O")
	}

	// The deadline wakes a waiting read with the conn's timeout error.
	_ = a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := rw.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	_ = a.SetReadDeadline(time.Time{})

	// The peer's close is io.EOF once its last bytes are read.
	if _, err := b.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if rest, err := io.ReadAll(rw); err != nil || string(rest) != "last" {
		t.Fatalf("read to the end: %q, %v; want \"last\", nil", rest, err)
	}
	if n, err := rw.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end: %d, %v; want 0, io.EOF", n, err)
	}

	// Closed under a waiting read: it ends with net.ErrClosed.
	c, _ := tcpPair(t)
	crw := connIO(c, newSockIO(c))
	done := make(chan error, 1)
	go func() { _, err := crw.Read(make([]byte, 1)); done <- err }()
	time.Sleep(10 * time.Millisecond) // most likely waiting by now; closed first ends it the same
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed conn: %v; want net.ErrClosed", err)
	}
}

// A front goroutine's socket I/O is pointed at its next connection; a
// connection that is not TCP has none (the conn itself serves).
func TestSockIOResetAndNonTCP(t *testing.T) {
	t.Parallel()
	a, _ := tcpPair(t)
	c, d := tcpPair(t)
	s := newSockIO(a)
	if s == nil {
		t.Skip("no raw socket I/O on this platform")
	}
	if !s.reset(c) {
		t.Fatal("reset to a TCP conn failed")
	}
	if _, err := s.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(d, buf); err != nil || buf[0] != 'x' {
		t.Fatalf("after reset the write went elsewhere: %q, %v", buf, err)
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if newSockIO(p1) != nil || s.reset(p1) {
		t.Fatal("a net.Pipe conn got raw socket I/O")
	}
	if rw := connIO(p1, nil); rw != p1 {
		t.Fatal("connIO without socket I/O is not the conn")
	}
}
