package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// A route to another host's world whose road is down gets the page that
// names the host, and is neither woken nor touched here (the host's
// daemon owns that world, even when a local one has the same names).
func TestRemoteRouteReconnectingPage(t *testing.T) {
	fw := &fakeWaker{wakeable: true}
	p := startProxy(t, Options{Waker: fw})
	fw.p = p
	for _, st := range []RouteState{StateReconnecting, StateSuspended} {
		p.Set([]Route{{Host: "web.feat.acme.localhost", Target: "127.0.0.1:1", State: st,
			Project: "acme", Worktree: "feat", Service: "web", Remote: "box"}})
		req, _ := http.NewRequest(http.MethodGet, "http://"+p.testAddr()+"/", nil)
		req.Host = "web.feat.acme.localhost"
		req.Header.Set("Accept", "text/html")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.WriteString(string(buf[:n]))
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: status %d; want 503", st, resp.StatusCode)
		}
		if st == StateReconnecting && !strings.Contains(b.String(), "reconnecting to box") {
			t.Fatalf("reconnecting page does not name the host:\n%s", b.String())
		}
		if !strings.Contains(b.String(), "binky --host box status") {
			t.Fatalf("%s page does not point at the host's status:\n%s", st, b.String())
		}
	}
	if n := fw.wakes.Load(); n != 0 {
		t.Fatalf("a remote route was woken here %d times; want 0", n)
	}
	if n := fw.touches.Load(); n != 0 {
		t.Fatalf("a remote route was touched here %d times; want 0", n)
	}
}
