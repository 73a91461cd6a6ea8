//go:build !windows

package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/safefile"
)

// hangGuard only detects a hang: Install returns at once or blocks for
// ever on a FIFO, never anything in between.
const hangGuard = 30 * time.Second

func installNoHang(t *testing.T, top string, c installCase) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, _, err := Install(top, c.rel, c.merge); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		t.Fatalf("Install(%s) has not returned after %s: it blocks", c.rel, hangGuard)
		return nil
	}
}

// TestInstallRefusesFIFO: a config that is a FIFO is refused at once,
// not opened and waited on.
func TestInstallRefusesFIFO(t *testing.T) {
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, _ := installProject(t)
			path := filepath.Join(top, filepath.FromSlash(c.rel))
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal("mkfifo:", err)
			}
			t.Cleanup(func() { // never leave a goroutine blocked on it
				if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			err := installNoHang(t, top, c)
			if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), path+" is a FIFO, not a regular file") {
				t.Errorf("Install over a FIFO: %v; want %s is a FIFO, not a regular file", err, path)
			}
			if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v, %v", st, err)
			}
		})
	}
}

// TestInstallRefusesDevZero: a config that is a symlink to /dev/zero is
// refused without reading from it.
func TestInstallRefusesDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, _ := installProject(t)
			path := filepath.Join(top, filepath.FromSlash(c.rel))
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.Symlink("/dev/zero", path)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := installNoHang(t, top, c)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), path+" is a symlink") {
				t.Errorf("Install over a symlink to /dev/zero: %v; want %s is a symlink", err, path)
			}
			// A read of /dev/zero allocates without end; the bound is far
			// above anything else the call does.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("Install allocated %d bytes; want no read of /dev/zero", grew)
			}
			if to, _ := os.Readlink(path); to != "/dev/zero" {
				t.Errorf("the symlink now points to %q", to)
			}
		})
	}
}
