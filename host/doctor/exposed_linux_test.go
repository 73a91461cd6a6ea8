//go:build linux

package doctor

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

// TestExposedWorldPort: a port of a world's block that listens on every
// interface is a warning naming the world; one on loopback is not.
func TestExposedWorldPort(t *testing.T) {
	wild, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0: %v", err)
	}
	defer wild.Close()
	local, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	home := t.TempDir()
	reg, err := registry.Open(context.Background(), filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]net.Listener{"open": wild, "closed": local} {
		p := l.Addr().(*net.TCPAddr).Port
		if _, _, err := reg.ReservePortBlock(context.Background(), "acme", name, func(*registry.PortBlock, []*registry.PortBlock) (int, int, error) { return p, p, nil }); err != nil {
			t.Fatal(err)
		}
	}
	reg.Close()
	fs := checkExposed(context.Background(), &Env{Home: home})
	var warned []string
	for _, f := range fs {
		if f.Status == StatusWarn {
			warned = append(warned, f.Message)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "world acme/open") || !strings.Contains(warned[0], "every interface") {
		t.Errorf("checkExposed = %v; want one warning for world acme/open", fs)
	}
}
