package health

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rawServer is an HTTP/1.1 server on a listener of its own that answers
// 200 with keep-alive, counts its connections, and can be told to drop a
// kept-alive connection at its next request instead of answering it.
type rawServer struct {
	ln net.Listener

	mu      sync.Mutex
	conns   int    // connections accepted
	answers int    // requests answered
	dropAt  int    // drop the connection, unanswered, at this request of a reused connection (0: never)
	stopLn  bool   // when dropping, close the listener too (the process died)
	reply   string // the answer; "" is 200 with a 2-byte body, kept alive
	closes  bool   // close the connection after answering
	mute    bool   // read requests, never answer
}

func startRaw(t testing.TB, addr string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go s.serve()
	return s
}

func (s *rawServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		go s.conn(c)
	}
}

func (s *rawServer) conn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 1; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.Body.Close()
		s.mu.Lock()
		drop := s.dropAt > 0 && n >= 2 && s.answers+1 >= s.dropAt
		if drop {
			s.dropAt = 0
		}
		stop := drop && s.stopLn
		s.mu.Unlock()
		if drop {
			if stop {
				s.ln.Close()
			}
			// Reset, as a killed process's socket is: no answer at all.
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		}
		s.mu.Lock()
		reply, closes, mute := s.reply, s.closes, s.mute
		s.mu.Unlock()
		if mute {
			continue
		}
		if reply == "" {
			reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		}
		s.mu.Lock()
		s.answers++ // before the client can read it
		s.mu.Unlock()
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
		if closes {
			return
		}
	}
}

func (s *rawServer) counts() (conns, answers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, s.answers
}

// TestProberKeepsConnection: a Prober's http attempts share one kept-alive
// connection, and Owner is asked about the address on every attempt, a
// reused connection's too.
func TestProberKeepsConnection(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	defer pr.Close()
	var owner ownerHook
	for i := range 4 {
		if err := pr.Check(context.Background(), Options{Owner: owner.check}); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	if conns, answers := srv.counts(); conns != 1 || answers != 4 {
		t.Errorf("4 attempts took %d connections and %d answers, want 1 and 4", conns, answers)
	}
	want := netip.MustParseAddrPort(srv.ln.Addr().String())
	if owner.calls() != 4 {
		t.Fatalf("Owner asked %d times, want 4", owner.calls())
	}
	for _, a := range owner.asked {
		if a != want {
			t.Errorf("Owner asked about %s, want %s", a, want)
		}
	}
}

// TestProberDeadService: the process behind a kept-alive connection died
// (its socket reset, its listener gone): the attempt fails, refused on the
// fresh connection it was retried on, and does not pass on the old one.
func TestProberDeadService(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	defer pr.Close()
	if err := pr.Check(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.dropAt, srv.stopLn = 2, true
	srv.mu.Unlock()
	err := pr.Check(context.Background(), Options{})
	// Windows' refusal is WSAECONNREFUSED (10061), not Go's ECONNREFUSED.
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.Errno(10061)) {
		t.Fatalf("probe of a dead service: %v, want connection refused", err)
	}
	if _, answers := srv.counts(); answers != 1 {
		t.Errorf("%d answers, want 1", answers)
	}
}

// TestProberRestartedService: the kept-alive connection belongs to a
// process that is gone, and another listens on the same port now: the
// attempt is made again on a fresh connection, which the new one answers;
// Owner is asked about it.
func TestProberRestartedService(t *testing.T) {
	t.Parallel()
	old := startRaw(t, "127.0.0.1:0")
	addr := old.ln.Addr().String()
	pr := NewProber(Probe{HTTP: "http://" + addr + "/"})
	defer pr.Close()
	if err := pr.Check(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	// The old one closes its listener and will reset the kept-alive
	// connection at the next request; the new one takes the port.
	old.mu.Lock()
	old.dropAt = 2
	old.mu.Unlock()
	old.ln.Close()
	srv := startRaw(t, addr)
	var owner ownerHook
	if err := pr.Check(context.Background(), Options{Owner: owner.check}); err != nil {
		t.Fatalf("probe of the restarted service: %v", err)
	}
	if conns, answers := srv.counts(); conns != 1 || answers != 1 {
		t.Errorf("the new server saw %d connections and %d answers, want 1 and 1", conns, answers)
	}
	if _, answers := old.counts(); answers != 1 {
		t.Errorf("the old server answered %d times, want 1", answers)
	}
	if owner.calls() != 1 || owner.asked[0].String() != addr {
		t.Errorf("Owner asked about %v, want [%s]", owner.asked, addr)
	}
}

// TestProberCloseDropsConnection: after Close the next attempt connects
// afresh.
func TestProberCloseDropsConnection(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	for range 2 {
		if err := pr.Check(context.Background(), Options{}); err != nil {
			t.Fatal(err)
		}
		pr.Close()
	}
	if conns, _ := srv.counts(); conns != 2 {
		t.Errorf("%d connections, want 2 (Close drops the kept one)", conns)
	}
}

// TestWaitWithLeavesNoConnection: the package's Wait and Check keep no
// connection alive.
func TestWaitWithLeavesNoConnection(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	p := Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"}
	for range 2 {
		if err := WaitWith(context.Background(), p, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := Check(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if conns, _ := srv.counts(); conns != 4 {
		t.Errorf("%d connections for 4 probes, want 4", conns)
	}
}

// BenchmarkProberSteady is one periodic probe of a healthy service on a
// kept-alive connection; BenchmarkCheckFresh the same on a connection of
// its own (what the monitor did before).
func BenchmarkProberSteady(b *testing.B) {
	srv := startRaw(b, "127.0.0.1:0")
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	defer pr.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := pr.Check(context.Background(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckFresh(b *testing.B) {
	srv := startRaw(b, "127.0.0.1:0")
	p := Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"}
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckWith(context.Background(), p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestProberAnswerShapes: a kept-alive probe reads the answers servers
// give (HTTP/1.0 that closes, chunked, informational first, a failure
// status, Connection: close) and keeps the connection only when the
// answer said it may.
func TestProberAnswerShapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, reply string
		closes      bool
		fails       string // the error; "" passes
		kept        bool   // two attempts share one connection
	}{
		{"http/1.0", "HTTP/1.0 200 OK\r\n\r\nhello", true, "", false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false, "", true},
		{"503", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\ndown", false, "503 Service Unavailable", true},
		{"redirect", "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n", false, "", true},
		{"informational", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false, "", true},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true, "", false},
		{"no length", "HTTP/1.1 200 OK\r\n\r\nuntil the end", true, "", false},
		{"garbage", "SSH-2.0-OpenSSH_9.6\r\n", true, "malformed HTTP", false},
	} {
		srv := startRaw(t, "127.0.0.1:0")
		srv.mu.Lock()
		srv.reply, srv.closes = c.reply, c.closes
		srv.mu.Unlock()
		pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/health?x=1"})
		for i := range 2 {
			err := pr.Check(context.Background(), Options{})
			switch {
			case c.fails == "" && err != nil:
				t.Errorf("%s, attempt %d: %v", c.name, i+1, err)
			case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)):
				t.Errorf("%s, attempt %d: %v; want %q", c.name, i+1, err, c.fails)
			}
		}
		pr.Close()
		if conns, _ := srv.counts(); (conns == 1) != c.kept {
			t.Errorf("%s: 2 attempts took %d connections; kept alive: want %v", c.name, conns, c.kept)
		}
	}
}

// TestProberHungServer: a server that accepts and never answers fails the
// attempt when its time is up, and the next attempt connects afresh.
func TestProberHungServer(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	srv.mu.Lock()
	srv.mute = true
	srv.mu.Unlock()
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	defer pr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := pr.Check(ctx, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hung server: %v; want the deadline", err)
	}
	srv.mu.Lock()
	srv.mute = false
	srv.mu.Unlock()
	if err := pr.Check(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	if conns, _ := srv.counts(); conns != 2 {
		t.Errorf("%d connections; want 2 (the hung one is not reused)", conns)
	}
}

// TestProberCancelled: an attempt ends when its caller gives up.
func TestProberCancelled(t *testing.T) {
	t.Parallel()
	srv := startRaw(t, "127.0.0.1:0")
	srv.mu.Lock()
	srv.mute = true
	srv.mu.Unlock()
	pr := NewProber(Probe{HTTP: "http://" + srv.ln.Addr().String() + "/"})
	defer pr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if conns, _ := srv.counts(); conns > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if err := pr.Check(ctx, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled attempt: %v; want context.Canceled", err)
	}
}
