//go:build linux

package ports

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestOwnerNamesThisProcess(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "0.0.0.0:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("listen %s: %v (skipped)", addr, err)
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		got := Owner(port)
		want := "pid " + strconv.Itoa(os.Getpid()) + " ("
		if !strings.HasPrefix(got, want) {
			t.Errorf("Owner(%d) on %s = %q; want prefix %q", port, addr, got, want)
		}
		if pid := OwnerPid(port); pid != os.Getpid() {
			t.Errorf("OwnerPid(%d) = %d; want %d", port, pid, os.Getpid())
		}
		l.Close()
		if got := Owner(port); got != "" {
			t.Errorf("Owner(%d) after close = %q; want empty", port, got)
		}
	}
}
