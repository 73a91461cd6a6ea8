package proxy

import (
	"net/http"
	"testing"
)

// TestApexRoutes: a routed name under another apex is forwarded (Host kept,
// on the front path too, by upper case and port); a name under that apex
// that is not routed gets 421, never the route list, and once its route
// goes the routed name does too.
func TestApexRoutes(t *testing.T) {
	t.Parallel()
	addr, _ := startBackend(t, "apex")
	p := startProxy(t, Options{})
	p.Set([]Route{{Host: "web.app2.acme.test", Target: addr, State: StateRunning, Project: "acme", Worktree: "feat", Service: "web"}})
	for _, host := range []string{"web.app2.acme.test", "WEB.app2.acme.test:" + itoa(p.Port())} {
		resp, body := get(t, p, host, "/x")
		if resp.StatusCode != http.StatusOK || decodeEcho(t, body).Name != "apex" {
			t.Errorf("Host %s: %d %q; want 200 from the backend", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"api.app2.acme.test", "example.com", "test"} {
		if resp, body := get(t, p, host, "/"); resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s (not routed): %d %q; want 421", host, resp.StatusCode, body)
		}
	}
	if resp, _ := get(t, p, "nothing.acme.localhost", "/"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown .localhost name: %d; want the route list (404)", resp.StatusCode)
	}
	p.Remove("web.app2.acme.test")
	if resp, _ := get(t, p, "web.app2.acme.test", "/"); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("after its route went: %d; want 421", resp.StatusCode)
	}
}
