package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// BenchmarkForward measures one small GET through the proxy to an
// in-process backend over loopback, keep-alive on both sides.
func BenchmarkForward(b *testing.B) { benchmarkForward(b, false) }

// BenchmarkForwardBrowserLogs is BenchmarkForward to a route whose project
// keeps browser logs: a request that is no page navigation (an API call,
// an asset) must cost what it costs without them.
func BenchmarkForwardBrowserLogs(b *testing.B) { benchmarkForward(b, true) }

func benchmarkForward(b *testing.B, browserLogs bool) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello world\n")
	}))
	defer backend.Close()
	p := New(Options{Logger: hclog.NewNullLogger(), Addr: "127.0.0.1:0", FallbackAddr: fallbackNone})
	if err := p.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	host := "bench.main.acme.localhost"
	p.Set([]Route{{Host: host, Target: strings.TrimPrefix(backend.URL, "http://"), State: StateRunning, BrowserLogs: browserLogs}})
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
	url := "http://" + p.testAddr() + "/"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Host = host
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkForwardNewConn measures one small GET through the proxy on a new
// client connection (Connection: close), as a script calling curl in a loop
// or a browser's short connections do: the accept, the front's per
// connection work and the close, on top of the exchange. The backend
// connection is pooled as usual. The client is a raw socket writing one
// fixed request and reading to EOF, so that its own cost stays small.
func BenchmarkForwardNewConn(b *testing.B) {
	benchNewConn(b, "bench.main.acme.localhost", false)
}

// BenchmarkHandOffNewConn is BenchmarkForwardNewConn for a request the
// front hands to net/http (an HTTP/1.0 GET): the fallback's cost per new
// connection.
func BenchmarkHandOffNewConn(b *testing.B) {
	benchNewConn(b, "bench.main.acme.localhost", true)
}

func benchNewConn(b *testing.B, host string, http10 bool) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello world\n")
	}))
	defer backend.Close()
	p := New(Options{Logger: hclog.NewNullLogger(), Addr: "127.0.0.1:0", FallbackAddr: fallbackNone})
	if err := p.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.Set([]Route{{Host: host, Target: strings.TrimPrefix(backend.URL, "http://"), State: StateRunning}})
	proto := "HTTP/1.1"
	if http10 {
		proto = "HTTP/1.0"
	}
	req := []byte("GET / " + proto + "\r\nHost: " + host + "\r\nUser-Agent: bench\r\nConnection: close\r\n\r\n")
	addr := p.testAddr()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		br := bufio.NewReaderSize(nil, 4<<10)
		for pb.Next() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Write(req); err != nil {
				b.Error(err)
				c.Close()
				return
			}
			br.Reset(c)
			line, err := br.ReadSlice('\n')
			if err != nil || !bytes.Contains(line, []byte(" 200 ")) {
				b.Errorf("status line %q: %v", line, err)
				c.Close()
				return
			}
			_, _ = io.Copy(io.Discard, br)
			c.Close()
		}
	})
}

// BenchmarkRouteLookup is the per-request table work: parse Host, find entry.
func BenchmarkRouteLookup(b *testing.B) {
	p := New(Options{Logger: hclog.NewNullLogger()})
	var routes []Route
	for _, wt := range []string{"main", "feat-a", "feat-b", "fix-c", "exp-d"} {
		for _, svc := range []string{"web", "api", "docs", "admin"} {
			routes = append(routes, Route{Host: svc + "." + wt + ".acme.localhost", Target: "127.0.0.1:4000", State: StateRunning})
		}
	}
	p.Set(routes)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "api.feat-b.acme.localhost:7355"
	b.ReportAllocs()
	for b.Loop() {
		if p.lookup(req) == nil {
			b.Fatal("no route")
		}
	}
}

// BenchmarkLiveConns is what counting a route's open connections adds to
// each request (liveConns.begin and end), with every core on one route.
func BenchmarkLiveConns(b *testing.B) {
	l := liveConns{clock: &coarseClock{}}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.begin()
			l.end()
		}
	})
}

// BenchmarkLiveConnsSerial is BenchmarkLiveConns from one goroutine: every
// end falls to zero and records the time.
func BenchmarkLiveConnsSerial(b *testing.B) {
	l := liveConns{clock: &coarseClock{}}
	for b.Loop() {
		l.begin()
		l.end()
	}
}
