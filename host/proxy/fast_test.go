package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
)

// startCountingBackend runs an in-process backend with handler and counts
// the connections the proxy opens to it.
func startCountingBackend(t *testing.T, h http.HandlerFunc) (string, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), &conns
}

func doGet(t *testing.T, p *Proxy, host string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	return doGetWith(t, http.DefaultClient, nil, p, host, hdr)
}

// doGetWith is doGet on client, tracing the request when trace is set.
func doGetWith(t *testing.T, client *http.Client, trace *httptrace.ClientTrace, p *Proxy, host string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.testAddr()+"/x?q=1", nil)
	if trace != nil {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	req.Host = host
	for k, vv := range hdr {
		req.Header[k] = vv
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET through the proxy: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// A GET takes the fast path: it keeps one backend connection for many
// requests, passes the end-to-end headers and trailers, and drops the
// hop-by-hop ones both ways.
func TestFastPathKeepsConnectionsAndHeaders(t *testing.T) {
	t.Parallel()
	addr, conns := startCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"X-Secret", "Proxy-Authorization", "Keep-Alive"} {
			if r.Header.Get(k) != "" {
				http.Error(w, "hop-by-hop header forwarded: "+k, http.StatusTeapot)
				return
			}
		}
		w.Header().Set("Connection", "X-Resp-Hop")
		w.Header().Set("X-Resp-Hop", "1")
		w.Header().Set("Trailer", "X-Sum")
		fmt.Fprintf(w, "%s %s xff=%s end=%s", r.Host, r.URL.RequestURI(), r.Header.Get("X-Forwarded-For"), r.Header.Get("X-End"))
		w.Header().Set("X-Sum", "42")
	})
	p := startProxy(t, Options{})
	host := "web.main.acme.localhost"
	p.Set([]Route{{Host: host, Target: addr, State: StateRunning}})
	hdr := http.Header{
		"Connection": {"X-Secret"}, "X-Secret": {"1"}, "Proxy-Authorization": {"Basic eA=="},
		"X-Forwarded-For": {"6.6.6.6"}, "X-End": {"kept"},
	}
	// The client may open a second connection to the proxy (net/http does
	// not reuse one whose request write it has not seen end within 50ms, as
	// on a busy machine), and the front pools a backend connection only
	// after the client has its answer: each client connection may cost a
	// backend connection, and no more.
	var clientConns atomic.Int32
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
		if !ci.Reused {
			clientConns.Add(1)
		}
	}}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	for i := range 20 {
		resp, body := doGetWith(t, client, trace, p, host, hdr)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, body)
		}
		if want := host + " /x?q=1 xff=127.0.0.1 end=kept"; body != want {
			t.Fatalf("request %d: backend saw %q; want %q", i, body, want)
		}
		if resp.Header.Get("X-Resp-Hop") != "" {
			t.Errorf("response header named in Connection reached the client")
		}
		if got := resp.Trailer.Get("X-Sum"); got != "42" {
			t.Errorf("trailer X-Sum: got %q; want 42", got)
		}
	}
	if n, m := conns.Load(), clientConns.Load(); n > m {
		t.Errorf("20 sequential requests on %d client connection(s) opened %d backend connections; want at most %d (kept alive)", m, n, m)
	}
}

// A backend that closes a kept-alive connection without saying so (it
// restarted, or its idle timeout struck) costs the next request nothing: the
// proxy retries it once on a new connection.
func TestFastPathRetriesAClosedIdleConnection(t *testing.T) {
	t.Parallel()
	addr, conns := startCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		c, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		// A keep-alive answer, then the connection is closed under it.
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		bw.Flush()
		c.Close()
	})
	p := startProxy(t, Options{})
	host := "web.main.acme.localhost"
	p.Set([]Route{{Host: host, Target: addr, State: StateRunning}})
	for i := range 5 {
		resp, body := doGet(t, p, host, nil)
		if resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("request %d: %d %q; want 200 ok (stale connection not retried)", i, resp.StatusCode, body)
		}
	}
	if n := conns.Load(); n != 5 {
		t.Errorf("backend saw %d connections; want 5 (one per request)", n)
	}
}

// Requests with a body still go through the ReverseProxy and arrive whole.
func TestBodiesTakeTheReverseProxy(t *testing.T) {
	t.Parallel()
	addr, _ := startCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	p := startProxy(t, Options{})
	host := "web.main.acme.localhost"
	p.Set([]Route{{Host: host, Target: addr, State: StateRunning}})
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.testAddr()+"/", strings.NewReader("payload"))
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST payload" {
		t.Errorf("backend answered %q; want %q", b, "POST payload")
	}
}
