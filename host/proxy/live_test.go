package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitOpen waits until the proxy counts want connections open to service
// of p/w (bounded by waitLimit: only a hang reaches it); a connection
// ends on its own goroutine after the client saw its end.
func waitOpen(t *testing.T, p *Proxy, service string, want int) time.Time {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		open, ended := p.Activity("p", "w", service)
		if open == want {
			return ended
		}
		if time.Now().After(deadline) {
			t.Fatalf("Activity(p, w, %q) open = %d after %s; want %d", service, open, waitLimit, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// liveRoutes routes web (the test backend) and api (nothing behind it)
// of world p/w.
func liveRoutes(backend string) []Route {
	return []Route{
		{Host: "web.w.p.localhost", Target: backend, State: StateRunning, Project: "p", Worktree: "w", Service: "web"},
		{Host: "api.w.p.localhost", Target: closedAddr, State: StateRunning, Project: "p", Worktree: "w", Service: "api"},
		{Host: "web.x.p.localhost", Target: backend, State: StateRunning, Project: "p", Worktree: "x", Service: "web"},
	}
}

// closedAddr is a target nothing listens on (port 9 on loopback: discard,
// never served in tests).
const closedAddr = "127.0.0.1:9"

// TestActivityCountsAnOpenWebSocket: an upgraded connection counts as open
// from its request until it closes, across a republished table (a route
// refresh), for its service and its world only; its close is when the
// route was last active.
func TestActivityCountsAnOpenWebSocket(t *testing.T) {
	t.Parallel()
	backend, _ := startBackend(t, "ws")
	p := startProxy(t, Options{})
	p.Set(liveRoutes(backend))
	if open, ended := p.Activity("p", "w", ""); open != 0 || !ended.IsZero() {
		t.Fatalf("before any request: open %d, ended %v; want 0 and never", open, ended)
	}
	conn, br := wsDial(t, p.testAddr(), "web.w.p.localhost", "/ws")
	defer conn.Close()
	if err := wsWrite(conn, 1, []byte("hello"), true); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := wsRead(br); err != nil || string(msg) != "hello" {
		t.Fatalf("echo: %q, %v", msg, err)
	}
	waitOpen(t, p, "web", 1)
	p.Set(liveRoutes(backend)) // a refresh builds a new table
	for _, tt := range []struct {
		worktree, service string
		want              int
	}{{"w", "web", 1}, {"w", "", 1}, {"w", "api", 0}, {"x", "", 0}} {
		if open, _ := p.Activity("p", tt.worktree, tt.service); open != tt.want {
			t.Errorf("Activity(p, %s, %q) with the socket open = %d; want %d", tt.worktree, tt.service, open, tt.want)
		}
	}
	// The socket still carries frames after the refresh.
	if err := wsWrite(conn, 1, []byte("again"), true); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := wsRead(br); err != nil || string(msg) != "again" {
		t.Fatalf("echo after the refresh: %q, %v", msg, err)
	}
	conn.Close()
	ended := waitOpen(t, p, "web", 0)
	if ended.IsZero() {
		t.Error("no last activity after the socket closed; want its close")
	}
	if _, wEnded := p.Activity("p", "w", ""); !wEnded.Equal(ended) {
		t.Errorf("the world's last activity %v; want its web's %v", wEnded, ended)
	}
}

// TestActivityCountsAnEventStream: a server-sent events stream counts as
// open while the client reads it, on the front (a plain GET) and through
// net/http (HTTP/1.0, which the front hands over).
func TestActivityCountsAnEventStream(t *testing.T) {
	t.Parallel()
	backend, _ := startBackend(t, "sse")
	p := startProxy(t, Options{})
	p.Set(liveRoutes(backend))
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		t.Run(proto, func(t *testing.T) {
			c, br := dialProxy(t, p)
			io.WriteString(c, "GET /sse "+proto+"\r\nHost: web.w.p.localhost\r\n\r\n")
			_ = c.SetReadDeadline(time.Now().Add(waitLimit))
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || !strings.Contains(line, "one") {
				t.Fatalf("first event %q, %v", line, err)
			}
			if open, _ := p.Activity("p", "w", "web"); open != 1 {
				t.Errorf("with the stream open: %d open; want 1", open)
			}
			c.Close()
			waitOpen(t, p, "web", 0)
		})
	}
}

// TestActivityEndsWithACancelledRequest: a request the client gives up on
// while the backend takes its time stops counting once it is cancelled: a
// GET whose answer streams (on the front), a POST not answered yet
// (through the ReverseProxy).
func TestActivityEndsWithACancelledRequest(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	addr, _ := startCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	p := startProxy(t, Options{})
	p.Set(liveRoutes(addr))
	for _, method := range []string{http.MethodGet, http.MethodPost} { // the front, the ReverseProxy
		t.Run(method, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader("x")
			}
			req, _ := http.NewRequestWithContext(ctx, method, "http://"+p.testAddr()+"/slow", body)
			req.Host = "web.w.p.localhost"
			done := make(chan error, 1)
			go func() {
				resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				done <- err
			}()
			select {
			case <-arrived:
			case <-time.After(waitLimit):
				t.Fatalf("the request did not reach the backend in %s", waitLimit)
			}
			if open, _ := p.Activity("p", "w", "web"); open != 1 {
				t.Errorf("while the backend holds the request: %d open; want 1", open)
			}
			cancel()
			if err := <-done; err == nil {
				t.Error("the cancelled request got an answer")
			}
			waitOpen(t, p, "web", 0)
		})
	}
}
