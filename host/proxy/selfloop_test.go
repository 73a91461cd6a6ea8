package proxy

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/listeners"
)

// TestRouteToTheProxyItself: a route whose target is the proxy's own
// listener (by address or by name) is answered at once with a page that
// says so, instead of the proxy forwarding to itself until it runs out
// of descriptors (it did: accept then failed with "too many open files"
// for every world); the proxy serves the other routes after it.
func TestRouteToTheProxyItself(t *testing.T) {
	t.Parallel()
	fp := &fakePeer{peer: listeners.Peer{Mine: true}}
	p := startProxy(t, Options{Peer: fp.fn})
	web, _ := startBackend(t, "web")
	p.Set([]Route{
		{Host: "web.main.acme.localhost", Target: web, State: StateRunning, Project: "acme", Worktree: "main", Service: "web"},
		{Host: "self.main.acme.localhost", Target: p.testAddr(), State: StateRunning, Project: "acme", Worktree: "main", Service: "self"},
		{Host: "named.main.acme.localhost", Target: "localhost:" + itoa(p.Port()), State: StateRunning, Project: "acme", Worktree: "main", Service: "named"},
	})
	for _, host := range []string{"self.main.acme.localhost", "named.main.acme.localhost", "self.main.acme.localhost"} {
		resp, body := get(t, p, host, "/")
		if resp.StatusCode != 503 || !strings.Contains(body, "is Binky&#39;s proxy itself") && !strings.Contains(body, "is Binky's proxy itself") {
			t.Errorf("GET %s, routed to the proxy: %d %.300q; want 503 saying the target is the proxy", host, resp.StatusCode, body)
		}
	}
	if resp, body := get(t, p, "web.main.acme.localhost", "/"); resp.StatusCode != 200 || decodeEcho(t, body).Name != "web" {
		t.Errorf("GET web after the loops: %d %q; want 200 from the backend", resp.StatusCode, body)
	}
}

func TestIsSelf(t *testing.T) {
	t.Parallel()
	ap := netip.MustParseAddrPort
	loop4, loop6, any4 := ap("127.0.0.1:7355"), ap("[::1]:7355"), ap("0.0.0.0:7355")
	for _, c := range []struct {
		self []netip.AddrPort
		to   string
		want bool
	}{
		{[]netip.AddrPort{loop4}, "127.0.0.1:7355", true},
		{[]netip.AddrPort{loop4}, "127.0.0.1:7356", false},
		{[]netip.AddrPort{loop4}, "127.0.0.2:7355", false}, // another loopback address: another socket
		{[]netip.AddrPort{loop4}, "[::ffff:127.0.0.1]:7355", true},
		{[]netip.AddrPort{loop4}, "0.0.0.0:7355", true}, // connecting to 0.0.0.0 reaches loopback
		{[]netip.AddrPort{loop4, loop6}, "[::1]:7355", true},
		{[]netip.AddrPort{any4}, "127.0.0.5:7355", true},
		{[]netip.AddrPort{any4}, "192.168.1.4:7355", false}, // not known to be this machine's
		{nil, "127.0.0.1:7355", false},
	} {
		if got := isSelf(c.self, ap(c.to)); got != c.want {
			t.Errorf("isSelf(%v, %s) = %v; want %v", c.self, c.to, got, c.want)
		}
	}
}
