package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/listeners"
	"github.com/binkyhq/binky/internal/testport"
)

// fakePeer is an Options.Peer with a fixed answer that records what it
// was asked.
type fakePeer struct {
	peer listeners.Peer
	err  error

	mu    sync.Mutex
	asked [][2]netip.AddrPort // client, server
}

func (f *fakePeer) fn(client, server netip.AddrPort) (listeners.Peer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, [2]netip.AddrPort{client, server})
	f.mu.Unlock()
	return f.peer, f.err
}

func (f *fakePeer) calls() [][2]netip.AddrPort {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]netip.AddrPort(nil), f.asked...)
}

// closedPort is a loopback address that refuses connections, held for
// the test: a port freed by closing a listener can be handed to the next
// listen on port 0 (in the proxy's tests, the proxy itself, which then
// forwarded to itself until Wine's sockets ran out).
func closedPort(t *testing.T) string { return testport.Closed(t) }

// hangUpBackend accepts connections and closes them unanswered: the
// exchange fails after the connection was made (502).
func hangUpBackend(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf) // the request head
			c.Close()
		}
	}()
	return l.Addr().String()
}

// ownerRoutes is a home with one running service, one down, one whose
// port refuses connections and one that hangs up.
func ownerRoutes(t *testing.T) []Route {
	t.Helper()
	web, _ := startBackend(t, "web")
	return []Route{
		{Host: "web.main.acme.localhost", Target: web, State: StateRunning, Project: "acme", Worktree: "main", Service: "web"},
		{Host: "api.main.acme.localhost", Target: closedPort(t), State: "down", Project: "acme", Worktree: "main", Service: "api"},
		{Host: "dead.main.acme.localhost", Target: closedPort(t), State: StateRunning, Project: "acme", Worktree: "main", Service: "dead"},
		{Host: "bad.main.acme.localhost", Target: hangUpBackend(t), State: StateRunning, Project: "acme", Worktree: "main", Service: "bad"},
	}
}

// pageCase is one request for a page the proxy writes itself: what the
// owner gets, and what anyone else gets instead.
type pageCase struct {
	name       string
	dashboard  bool // ask the proxy that has a dashboard handler
	host       string
	ownerCode  int
	ownerHas   string // a piece of the owner's page
	otherCode  int
	otherBody  string
	otherRetry string // Retry-After (and Refresh) of the other user's answer
}

var pageCases = []pageCase{
	{"dashboard", true, "binky.localhost", 200, "dashboard of acme", 403, refusalBody, ""},
	{"route list on the dashboard host", false, "binky.localhost", 200, "web.main.acme.localhost", 403, refusalBody, ""},
	{"404 of an unknown name", true, "nope.main.acme.localhost", 404, "web.main.acme.localhost", 403, refusalBody, ""},
	{"404 of bare localhost", true, "localhost", 404, "web.main.acme.localhost", 403, refusalBody, ""},
	{"service down", true, "api.main.acme.localhost", 503, "binky logs main", 503, plainUnavailableBody, "2"},
	{"service not answering", true, "dead.main.acme.localhost", 503, "not answering on 127.0.0.1:", 503, plainUnavailableBody, "2"},
	{"service hung up", true, "bad.main.acme.localhost", 502, "did not answer", 502, plainBadGatewayBody, "2"},
}

// TestPagesAnswerOnlyTheOwner: the dashboard, the route list and a routed
// service's own pages are shown when Peer says the client is the owner
// (or the platform cannot tell), and otherwise answered with a fixed text
// that names nothing of the home; proxied traffic is served to everyone
// and never asks who it is.
func TestPagesAnswerOnlyTheOwner(t *testing.T) {
	t.Parallel()
	for _, who := range []struct {
		name  string
		peer  listeners.Peer
		err   error
		owner bool
	}{
		{"owner", listeners.Peer{Mine: true, User: "uid 1000"}, nil, true},
		{"another user", listeners.Peer{User: "uid 1001"}, nil, false},
		{"not identified", listeners.Peer{}, fmt.Errorf("find the owner: %w", listeners.ErrNoPeer), false},
		{"lookup failed", listeners.Peer{}, errors.New("read /proc/net/tcp: permission denied"), false},
		{"platform cannot tell", listeners.Peer{}, fmt.Errorf("find the owner on plan9: %w", errors.ErrUnsupported), true},
	} {
		t.Run(who.name, func(t *testing.T) {
			t.Parallel()
			fp := &fakePeer{peer: who.peer, err: who.err}
			routes := ownerRoutes(t)
			dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "dashboard of acme") })
			withDash := startProxy(t, Options{Dashboard: dash, Peer: fp.fn})
			bare := startProxy(t, Options{Peer: fp.fn})
			withDash.Set(routes)
			bare.Set(routes)

			// Proxied traffic: the front's path, and net/http's (a body).
			resp, body := get(t, withDash, "web.main.acme.localhost", "/x")
			if resp.StatusCode != 200 || decodeEcho(t, body).Name != "web" {
				t.Errorf("GET a running service: %d %q; want 200 from the backend", resp.StatusCode, body)
			}
			req, _ := http.NewRequest(http.MethodPost, "http://"+withDash.testAddr()+"/x", strings.NewReader("body"))
			req.Host = "web.main.acme.localhost"
			postClient := &http.Client{Timeout: waitLimit, Transport: &http.Transport{Proxy: nil}}
			if resp, err := postClient.Do(req); err != nil || resp.StatusCode != 200 {
				t.Errorf("POST to a running service: %v %v; want 200 from the backend", resp, err)
			} else {
				resp.Body.Close()
			}
			if n := len(fp.calls()); n != 0 {
				t.Fatalf("proxied requests asked who the client is %d times; want never", n)
			}

			for _, pc := range pageCases {
				p := bare
				if pc.dashboard {
					p = withDash
				}
				resp, body := get(t, p, pc.host, "/")
				if who.owner {
					if resp.StatusCode != pc.ownerCode || !strings.Contains(body, pc.ownerHas) {
						t.Errorf("%s: %d %.300q; want %d with %q", pc.name, resp.StatusCode, body, pc.ownerCode, pc.ownerHas)
					}
					continue
				}
				if resp.StatusCode != pc.otherCode || body != pc.otherBody {
					t.Errorf("%s: %d %q; want %d %q", pc.name, resp.StatusCode, body, pc.otherCode, pc.otherBody)
				}
				if got := resp.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
					t.Errorf("%s: Content-Type %q; want plain text", pc.name, got)
				}
				if ra, rf := resp.Header.Get("Retry-After"), resp.Header.Get("Refresh"); ra != pc.otherRetry || rf != pc.otherRetry {
					t.Errorf("%s: Retry-After %q, Refresh %q; want %q", pc.name, ra, rf, pc.otherRetry)
				}
				for _, secret := range []string{"acme", "main", "127.0.0.1", "binky logs"} {
					if strings.Contains(body, secret) {
						t.Errorf("%s: the answer to another user names %q: %q", pc.name, secret, body)
					}
				}
			}
		})
	}
}

// TestPeerAskedOncePerConnection: a keep-alive connection is identified
// once, with the client's own address and the proxy's.
func TestPeerAskedOncePerConnection(t *testing.T) {
	t.Parallel()
	fp := &fakePeer{peer: listeners.Peer{Mine: true}}
	p := startProxy(t, Options{Peer: fp.fn})
	client := &http.Client{Timeout: waitLimit, Transport: &http.Transport{Proxy: nil}}
	t.Cleanup(client.CloseIdleConnections)
	var local, remote net.Addr
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest(http.MethodGet, "http://"+p.testAddr()+"/", nil)
		req.Host = "binky.localhost"
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) {
				if i > 0 && !ci.Reused {
					t.Errorf("request %d: a new connection; want the kept-alive one", i)
				}
				local, remote = ci.Conn.LocalAddr(), ci.Conn.RemoteAddr()
			},
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d; want 200", i, resp.StatusCode)
		}
	}
	calls := fp.calls()
	if len(calls) != 1 {
		t.Fatalf("Peer asked %d times for 3 requests on one connection; want once", len(calls))
	}
	if want := [2]netip.AddrPort{addrPortOf(local), addrPortOf(remote)}; calls[0] != want {
		t.Errorf("Peer asked about %v; want client %v, server %v", calls[0], want[0], want[1])
	}
}

// TestHTTPSPagesAnswerOnlyTheOwner: over TLS (HTTP/2) the dashboard host is
// refused to another user as over http, and Peer is asked with the https
// listener's address.
func TestHTTPSPagesAnswerOnlyTheOwner(t *testing.T) {
	// Not parallel: certmagic waits for an on-demand certificate by its
	// name across every manager of the process, so two tests asking for
	// binky.localhost at once could be handed each other's (another CA's)
	// certificate. A daemon has one manager.
	m := newCerts(t)
	fp := &fakePeer{peer: listeners.Peer{User: "uid 1001"}}
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "dashboard of acme") })
	p := startProxy(t, Options{Certs: m, TLSAddr: "127.0.0.1:0", TLSFallbackAddr: fallbackNone, Dashboard: dash, Peer: fp.fn})
	proxyAddr := "127.0.0.1:" + itoa(p.TLSPort())
	resp, err := tlsClient(m.CA().Pool(), proxyAddr).Get(p.SecureURL("binky.localhost"))
	if err != nil {
		t.Fatalf("GET dashboard over https: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || string(b) != refusalBody || resp.ProtoMajor != 2 {
		t.Errorf("dashboard over https for another user: %s %d %q; want HTTP/2 403 %q", resp.Proto, resp.StatusCode, b, refusalBody)
	}
	calls := fp.calls()
	if len(calls) != 1 || calls[0][1].Port() != uint16(p.TLSPort()) || !calls[0][0].Addr().IsLoopback() {
		t.Errorf("Peer asked %v; want once, about a loopback client of port %d", calls, p.TLSPort())
	}
}

// TestPagesRefuseAClientNotOnLoopback: a client that is not on loopback is
// refused without asking who it is, even where the platform cannot tell.
func TestPagesRefuseAClientNotOnLoopback(t *testing.T) {
	t.Parallel()
	fp := &fakePeer{err: errors.ErrUnsupported}
	p := New(Options{Logger: testLogger(t), Peer: fp.fn})
	for _, host := range []string{"binky.localhost", "nope.localhost"} {
		r := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil) // RemoteAddr 192.0.2.1:1234
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 80}))
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || w.Body.String() != refusalBody {
			t.Errorf("%s from %s: %d %q; want 403 %q", host, r.RemoteAddr, w.Code, w.Body.String(), refusalBody)
		}
	}
	if n := len(fp.calls()); n != 0 {
		t.Errorf("Peer asked %d times about a remote client; want never", n)
	}
}

// TestWakePageAnswersOnlyTheOwner: a browser of another user waking a
// suspended world wakes it (traffic is unchanged) but gets the plain 503,
// reloading every second like the starting page.
func TestWakePageAnswersOnlyTheOwner(t *testing.T) {
	t.Parallel()
	fp := &fakePeer{peer: listeners.Peer{User: "uid 1001"}}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) }))
	t.Cleanup(backend.Close)
	fw := &fakeWaker{wakeable: true, release: make(chan struct{})}
	p := startProxy(t, Options{Waker: fw, WakeTimeout: waitLimit, Peer: fp.fn})
	fw.p = p
	fw.route = Route{Host: "web.w1.acme.localhost", Target: strings.TrimPrefix(backend.URL, "http://"), State: StateSuspended, Project: "acme", Worktree: "w1", Service: "web"}
	p.Set([]Route{fw.route})
	req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
	req.Host = "web.w1.acme.localhost"
	req.Header.Set("Accept", "text/html")
	resp, err := (&http.Client{Timeout: waitLimit, Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(b) != plainUnavailableBody || resp.Header.Get("Refresh") != "1" {
		t.Errorf("starting page for another user: %d %q (Refresh %q); want 503 %q, Refresh 1", resp.StatusCode, b, resp.Header.Get("Refresh"), plainUnavailableBody)
	}
	close(fw.release)
	deadline := time.Now().Add(waitLimit)
	for fw.wakes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if fw.wakes.Load() != 1 {
		t.Errorf("wakes %d; want the world woken once", fw.wakes.Load())
	}
}

// The test binary also fetches pages for another test, as another user:
// with fetchEnv set to a JSON list of fetches it does them and prints
// the results as JSON on stdout (owner_linux_test.go).
const fetchEnv = "BINKY_PROXY_TEST_FETCH"

// fetch is one plain GET of http://addr/ with Host host.
type fetch struct {
	Addr string `json:"addr"`
	Host string `json:"host"`
}

type fetchResult struct {
	fetch
	Status int    `json:"status"`
	Body   string `json:"body"`
	Err    string `json:"err,omitempty"`
}

// fetchAll does each fetch on a fresh connection.
func fetchAll(fs []fetch) []fetchResult {
	out := make([]fetchResult, 0, len(fs))
	for _, f := range fs {
		res := fetchResult{fetch: f}
		client := &http.Client{Timeout: waitLimit, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
		req, err := http.NewRequest(http.MethodGet, "http://"+f.Addr+"/", nil)
		if err == nil {
			req.Host = f.Host
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				res.Status, res.Body = resp.StatusCode, string(b)
			}
		}
		if err != nil {
			res.Err = err.Error()
		}
		out = append(out, res)
	}
	return out
}

// runFetch is the child's side: spec is fetchEnv's JSON.
func runFetch(spec string) int {
	var fs []fetch
	if err := json.Unmarshal([]byte(spec), &fs); err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(fetchAll(fs)); err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		return 1
	}
	return 0
}
