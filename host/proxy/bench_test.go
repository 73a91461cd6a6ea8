package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// BenchmarkForward measures one small GET through the proxy to an
// in-process backend over loopback, keep-alive on both sides.
func BenchmarkForward(b *testing.B) {
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
	p.Set([]Route{{Host: host, Target: strings.TrimPrefix(backend.URL, "http://"), State: StateRunning}})
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
