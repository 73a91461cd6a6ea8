package listeners

import (
	"net/netip"
	"strings"
	"testing"
)

func TestExposed(t *testing.T) {
	socks := []Socket{
		{Addr: netip.MustParseAddrPort("127.0.0.1:3000")},
		{Addr: netip.MustParseAddrPort("[::1]:3000")},
		{Addr: netip.MustParseAddrPort("0.0.0.0:3001")},
		{Addr: netip.MustParseAddrPort("[::]:3002")},
		{Addr: netip.MustParseAddrPort("192.168.1.5:3003")},
		{Addr: netip.MustParseAddrPort("0.0.0.0:9999")},
	}
	got := Exposed(socks, 3000, 3001, 3002, 3003)
	if len(got) != 3 {
		t.Fatalf("Exposed = %v; want the three non-loopback sockets on the ports asked", got)
	}
	if Exposed(socks, 3000) != nil {
		t.Error("a loopback-only port is reported exposed")
	}
	if w := ExposedWarning(got); !strings.Contains(w, "0.0.0.0 (every interface) port 3001") {
		t.Errorf("ExposedWarning = %q", w)
	}
	if ExposedWarning(nil) != "" {
		t.Error("ExposedWarning(nil) is not empty")
	}
}
