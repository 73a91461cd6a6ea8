package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/internal/testlog"
)

func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: testlog.Writer(t)})
}

// startProxy starts a proxy on an ephemeral loopback port.
func startProxy(t *testing.T, opts Options) *Proxy {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
		opts.FallbackAddr = fallbackNone
	}
	p := New(opts)
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("start proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

func (p *Proxy) testAddr() string { return "127.0.0.1:" + itoa(p.Port()) }

// get asks the proxy for path with the given Host header.
func get(t *testing.T, p *Proxy, host, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+p.testAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s via proxy with Host %q: %v", path, host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

func decodeEcho(t *testing.T, body string) echo {
	t.Helper()
	var e echo
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("decode backend echo %q: %v", body, err)
	}
	return e
}

func TestTwoWorldsReachedByName(t *testing.T) {
	t.Parallel()
	addrA, _ := startBackend(t, "feat-a")
	addrB, _ := startBackend(t, "feat-b")
	p := startProxy(t, Options{})
	p.Set([]Route{
		{Host: "web.feat-a.acme.localhost", Target: addrA, State: StateRunning, Project: "acme", Worktree: "feat-a", Service: "web"},
		{Host: "Web.Feat-B.acme.localhost", Target: addrB, State: StateRunning, Project: "acme", Worktree: "feat-b", Service: "web"},
	})
	for _, tc := range []struct{ host, want string }{
		{"web.feat-a.acme.localhost", "feat-a"},
		{"web.feat-b.acme.localhost:" + itoa(p.Port()), "feat-b"},
		{"WEB.FEAT-A.ACME.LOCALHOST.", "feat-a"},
	} {
		resp, body := get(t, p, tc.host, "/hello")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Host %s: status got %d; want 200 (body %q)", tc.host, resp.StatusCode, body)
		}
		e := decodeEcho(t, body)
		if e.Name != tc.want {
			t.Errorf("Host %s reached %q; want %q", tc.host, e.Name, tc.want)
		}
		if e.Host != tc.host {
			t.Errorf("backend saw Host %q; want %q (preserved)", e.Host, tc.host)
		}
		if e.Path != "/hello" {
			t.Errorf("backend saw path %q; want /hello", e.Path)
		}
		if got := e.Headers["X-Forwarded-Host"]; got != tc.host {
			t.Errorf("X-Forwarded-Host: got %q; want %q", got, tc.host)
		}
		if got := e.Headers["X-Forwarded-Proto"]; got != "http" {
			t.Errorf("X-Forwarded-Proto: got %q; want http", got)
		}
		if got := e.Headers["X-Forwarded-For"]; got != "127.0.0.1" {
			t.Errorf("X-Forwarded-For: got %q; want 127.0.0.1", got)
		}
	}
}

func TestWebSocketEchoThroughProxy(t *testing.T) {
	t.Parallel()
	addr, _ := startBackend(t, "ws")
	p := startProxy(t, Options{})
	host := "app.main.acme.localhost"
	p.Upsert(Route{Host: host, Target: addr, State: StateRunning, Project: "acme", Worktree: "main", Service: "app"})
	conn, br := wsDial(t, p.testAddr(), host, "/ws")
	defer conn.Close()
	for _, msg := range []string{"hello", strings.Repeat("x", 300), "hmr:update /src/App.tsx"} {
		if err := wsWrite(conn, 1, []byte(msg), true); err != nil {
			t.Fatalf("write frame: %v", err)
		}
		op, got, err := wsRead(br)
		if err != nil {
			t.Fatalf("read echoed frame: %v", err)
		}
		if op != 1 || string(got) != msg {
			t.Errorf("echo: got op %d %q; want op 1 %q", op, got, msg)
		}
	}
}

func TestStreamsArriveEventByEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, contentType string }{
		{"/sse", "text/event-stream"},
		{"/chunked", "text/plain"},
	} {
		t.Run(tc.path[1:], func(t *testing.T) {
			t.Parallel()
			addr, _ := startBackend(t, "stream")
			p := startProxy(t, Options{})
			host := "api.main.acme.localhost"
			p.Upsert(Route{Host: host, Target: addr, State: StateRunning, Project: "acme", Worktree: "main", Service: "api"})

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.testAddr()+tc.path, nil)
			req.Host = host
			resp, err := (&http.Transport{Proxy: nil}).RoundTrip(req)
			if err != nil {
				t.Fatalf("open stream: %v", err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != tc.contentType {
				t.Fatalf("Content-Type: got %q; want %q", ct, tc.contentType)
			}
			sc := bufio.NewScanner(resp.Body)
			next := func() string {
				for sc.Scan() {
					if line := sc.Text(); strings.HasPrefix(line, "data: ") {
						return strings.TrimPrefix(line, "data: ")
					}
				}
				t.Fatalf("stream ended early: %v", sc.Err())
				return ""
			}
			// The backend sends "two" only after /release; if the proxy
			// buffered, "one" would never arrive and the context deadline
			// would fail the read.
			if got := next(); got != "one" {
				t.Fatalf("first event: got %q; want one", got)
			}
			if r, _ := get(t, p, host, "/release"); r.StatusCode != http.StatusOK {
				t.Fatalf("release: status %d", r.StatusCode)
			}
			if got := next(); got != "two" {
				t.Fatalf("second event: got %q; want two", got)
			}
		})
	}
}

func TestRestartedServiceOnNewPortKeepsItsName(t *testing.T) {
	t.Parallel()
	addr1, stop1 := startBackend(t, "first")
	p := startProxy(t, Options{})
	host := "web.feat-x.acme.localhost"
	rt := Route{Host: host, Target: addr1, State: StateRunning, Project: "acme", Worktree: "feat-x", Service: "web"}
	p.Set([]Route{rt})
	if _, body := get(t, p, host, "/"); decodeEcho(t, body).Name != "first" {
		t.Fatalf("before restart: reached %q; want first", body)
	}

	// The process dies: the route still says running, the backend refuses.
	stop1()
	resp, body := get(t, p, host, "/")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("backend down: status got %d; want 503", resp.StatusCode)
	}
	for _, want := range []string{"web", "feat-x", "acme", `http-equiv="refresh"`} {
		if !strings.Contains(body, want) {
			t.Errorf("backend-down page lacks %q:\n%s", want, body)
		}
	}
	if got := resp.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After: got %q; want 2", got)
	}

	// The daemon marks it restarting while the supervisor brings it back.
	rt.State = StateRestarting
	p.Upsert(rt)
	resp, body = get(t, p, host, "/")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "restarting") {
		t.Fatalf("restarting: got %d %q; want 503 naming the state", resp.StatusCode, body)
	}

	addr2, _ := startBackend(t, "second")
	if addr2 == addr1 {
		t.Fatalf("second backend reused address %s", addr1)
	}
	rt.Target, rt.State = addr2, StateRunning
	p.Upsert(rt)
	resp, body = get(t, p, host, "/")
	if resp.StatusCode != http.StatusOK || decodeEcho(t, body).Name != "second" {
		t.Fatalf("after restart: got %d %q; want 200 from second", resp.StatusCode, body)
	}
}

func TestHostPolicy(t *testing.T) {
	t.Parallel()
	addr, _ := startBackend(t, "policy")
	p := startProxy(t, Options{})
	p.Set([]Route{
		{Host: "web.main.acme.localhost", Target: addr, State: StateRunning, Project: "acme", Worktree: "main", Service: "web"},
		{Host: "x.main.acme.localhost", Target: addr, State: StateRunning, Project: "acme", Worktree: "main", Service: `<script>alert(1)</script>`},
	})
	for _, tc := range []struct {
		host string
		want int
	}{
		{"evil.example.com", http.StatusMisdirectedRequest},
		{"127.0.0.1", http.StatusMisdirectedRequest},
		{"127.0.0.1:" + itoa(p.Port()), http.StatusMisdirectedRequest},
		{"[::1]:80", http.StatusMisdirectedRequest},
		{"web.main.acme.localhost.evil.com", http.StatusMisdirectedRequest},
		{"localhost.evil.com", http.StatusMisdirectedRequest},
		{"web.main.acme.localhost%2f", http.StatusMisdirectedRequest},
		{"web.main.acme.localhost", http.StatusOK},
		{"nope.main.acme.localhost", http.StatusNotFound},
		{"localhost", http.StatusNotFound},
		{"binky.localhost", http.StatusOK},
	} {
		resp, body := get(t, p, tc.host, "/")
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: status got %d; want %d", tc.host, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusMisdirectedRequest && strings.Contains(body, "acme") {
			t.Errorf("Host %q: 421 body leaks routes: %q", tc.host, body)
		}
	}

	resp, body := get(t, p, "nope.main.acme.localhost", "/")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown name: status %d; want 404", resp.StatusCode)
	}
	wantLink := `href="` + p.URL("web.main.acme.localhost") + `"`
	if !strings.Contains(body, wantLink) {
		t.Errorf("404 page lacks link %s:\n%s", wantLink, body)
	}
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("404 page does not escape a service name:\n%s", body)
	}
	if !strings.Contains(body, "nope.main.acme.localhost") {
		t.Errorf("404 page does not name the unknown host")
	}
}

func TestDashboardHostServesHandler(t *testing.T) {
	t.Parallel()
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "dashboard here") })
	p := startProxy(t, Options{Dashboard: dash})
	resp, body := get(t, p, "binky.localhost:"+itoa(p.Port()), "/")
	if resp.StatusCode != http.StatusOK || body != "dashboard here" {
		t.Fatalf("binky.localhost: got %d %q; want 200 from the dashboard handler", resp.StatusCode, body)
	}
}

func TestInvalidRoutesAreDropped(t *testing.T) {
	t.Parallel()
	p := New(Options{Logger: testLogger(t)})
	p.Set([]Route{
		{Host: "example_.com", Target: "127.0.0.1:1", State: StateRunning},
		{Host: "test", Target: "127.0.0.1:1", State: StateRunning},
		{Host: "localhost", Target: "127.0.0.1:1", State: StateRunning},
		{Host: "binky.localhost", Target: "127.0.0.1:1", State: StateRunning},
		{Host: "a.b.localhost", Target: "no-port", State: StateRunning},
		{Host: "ok.b.localhost", Target: "127.0.0.1:1", State: StateRunning},
	})
	got := p.Routes()
	if len(got) != 1 || got[0].Host != "ok.b.localhost" {
		t.Fatalf("routes: got %+v; want only ok.b.localhost", got)
	}
	p.Remove("OK.b.localhost:80")
	if got := p.Routes(); len(got) != 0 {
		t.Fatalf("after Remove: got %+v; want none", got)
	}
}

func TestFallbackPortIsUsedAndPrinted(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p := New(Options{Logger: testLogger(t), Addr: busy.Addr().String(), FallbackAddr: "127.0.0.1:0"})
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("start with busy primary: %v", err)
	}
	defer p.Close()
	if p.Port() == 0 || p.Port() == listenerPort(busy) {
		t.Fatalf("port: got %d; want a fallback port other than %d", p.Port(), listenerPort(busy))
	}
	want := "http://web.a.b.localhost:" + itoa(p.Port())
	if got := p.URL("web.a.b.localhost"); got != want {
		t.Errorf("URL: got %q; want %q", got, want)
	}

	q := New(Options{Logger: testLogger(t), Addr: busy.Addr().String(), FallbackAddr: fallbackNone})
	if err := q.Start(context.Background()); err == nil {
		q.Close()
		t.Fatal("start on a busy port without fallback: got nil error; want one")
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		port   int
		def    int
		want   string
	}{
		{"http", 80, 80, "http://w.p.localhost"},
		{"http", 7355, 80, "http://w.p.localhost:7355"},
		{"https", 443, 443, "https://w.p.localhost"},
		{"https", 7356, 443, "https://w.p.localhost:7356"},
	} {
		if got := hostURL(tc.scheme, "w.p.localhost", tc.port, tc.def); got != tc.want {
			t.Errorf("hostURL(%s, %d): got %q; want %q", tc.scheme, tc.port, got, tc.want)
		}
	}
}

func TestCloseEndsWebSockets(t *testing.T) {
	t.Parallel()
	addr, _ := startBackend(t, "ws-close")
	p := startProxy(t, Options{})
	host := "app.main.acme.localhost"
	p.Upsert(Route{Host: host, Target: addr, State: StateRunning, Project: "acme", Worktree: "main", Service: "app"})
	conn, br := wsDial(t, p.testAddr(), host, "/ws")
	defer conn.Close()
	p.Close()
	if _, _, err := wsRead(br); err == nil {
		t.Fatal("read after proxy Close: got a frame; want the connection closed")
	}
}

// A second home's proxy finds the usual port and the fallback held (by the
// first home's proxy): it listens on another loopback port, names the
// holders, and its URLs carry the port that works.
func TestBothPortsHeldListensElsewhereAndSaysWhy(t *testing.T) {
	t.Parallel()
	var held []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		held = append(held, l)
	}
	holder := func(addr string) string {
		if addr == held[0].Addr().String() {
			return "the proxy of binky home aaaa (/home/a/.binky), pid 1"
		}
		return ""
	}
	p := New(Options{Logger: testLogger(t), Addr: held[0].Addr().String(), FallbackAddr: held[1].Addr().String(), Holder: holder})
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("start with both ports held: %v", err)
	}
	defer p.Close()
	if p.Port() == 0 || p.Port() == listenerPort(held[0]) || p.Port() == listenerPort(held[1]) {
		t.Fatalf("port %d; want one neither held port", p.Port())
	}
	note := p.Note()
	for _, want := range []string{"binky home aaaa (/home/a/.binky), pid 1", held[1].Addr().String(), "listening on 127.0.0.1:" + itoa(p.Port())} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not say %q", note, want)
		}
	}
	if got, want := p.URL("web.a.b.localhost"), "http://web.a.b.localhost:"+itoa(p.Port()); got != want {
		t.Errorf("URL %q; want %q", got, want)
	}
	// A proxy on its own address has nothing to explain.
	q := New(Options{Logger: testLogger(t), Addr: "127.0.0.1:0", FallbackAddr: fallbackNone})
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if q.Note() != "" {
		t.Errorf("note %q on the asked address; want none", q.Note())
	}
}
