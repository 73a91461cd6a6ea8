package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServiceWakeStalledClient: a client that asks for a waiting service
// and then stops reading (its answer, larger than every socket buffer,
// cannot be written), and one that never finishes its request, freeze
// neither the wake, nor the other clients waiting on it, nor requests to
// other routes meanwhile.
func TestServiceWakeStalledClient(t *testing.T) {
	big := strings.Repeat("x", 16<<20)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	t.Cleanup(backend.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	t.Cleanup(other.Close)
	fw := &fakeServiceWaker{release: make(chan struct{})}
	p := startProxy(t, Options{Waker: fw, WakeTimeout: waitLimit})
	fw.p = p
	fw.route = Route{Host: "web.w1.acme.localhost", Target: strings.TrimPrefix(backend.URL, "http://"), State: StateWake, Project: "acme", Worktree: "w1", Service: "web"}
	p.Set([]Route{fw.route, {Host: "api.w1.acme.localhost", Target: strings.TrimPrefix(other.URL, "http://"), State: StateRunning, Project: "acme", Worktree: "w1", Service: "api"}})

	// The stalled ones: a whole request never read from, half a request.
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: web.w1.acme.localhost\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: web.w1.acme.loc",
	} {
		c, err := net.Dial("tcp", p.testAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4096)
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(waitLimit)
	for waiting(p, "acme/w1/web") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the stalled client does not wait on the wake")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Another route answers while the wake waits.
	if resp, body := get(t, p, "api.w1.acme.localhost", "/"); resp.StatusCode != 200 || body != "other" {
		t.Errorf("another route during the wake: %d %.100q", resp.StatusCode, body)
	}
	const n = 3
	var wg sync.WaitGroup
	sizes, codes := make([]int, n), make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
			req.Host = "web.w1.acme.localhost"
			resp, err := (&http.Client{Timeout: waitLimit + 10*time.Second, Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			codes[i], sizes[i] = resp.StatusCode, len(b)
		}()
	}
	for waiting(p, "acme/w1/web") < n+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients wait on the wake; want %d", waiting(p, "acme/w1/web"), n+1)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(fw.release)
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || sizes[i] != len(big) {
			t.Errorf("request %d beside a stalled client: %d, %d bytes; want 200, %d", i, codes[i], sizes[i], len(big))
		}
	}
	// The stalled client's answer is stuck in its socket; the route
	// serves on, and the wake happened once.
	for i := range 2 {
		req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
		req.Host = "web.w1.acme.localhost"
		resp, err := (&http.Client{Timeout: waitLimit, Transport: &http.Transport{Proxy: nil}}).Do(req)
		if err != nil {
			t.Fatalf("request %d after the wake: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) != len(big) {
			t.Errorf("request %d after the wake: %d, %d bytes", i, resp.StatusCode, len(b))
		}
	}
	if got := fw.serviceWakes.Load(); got != 1 {
		t.Errorf("%d service wakes; want 1", got)
	}
}
