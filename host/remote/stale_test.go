//go:build !windows

package remote

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestClearStaleControl: a control socket no master answers on is
// removed before a session; a file that is not a socket is left alone.
func TestClearStaleControl(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no ssh client (apt-get install openssh-client): CI must have it")
		}
		t.Skip("no ssh client (apt-get install openssh-client)")
	}
	home := t.TempDir()
	h := &Host{Name: "box", SSH: "nobody@box.invalid", Addr: "box.invalid"}
	path := h.ControlPath(home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	// A socket bound and closed without unlinking: what a killed master
	// leaves.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	h.ClearStaleControl(home)
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("stale socket still there: %v", err)
	}
	// Not a socket: not ours to judge.
	os.WriteFile(path, []byte("x"), 0o600)
	h.ClearStaleControl(home)
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("a plain file was removed: %v", err)
	}
}
