//go:build !windows

package dotenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/safefile"
)

// readNoHang reads path in a goroutine; 30s is a hang detector (a FIFO's
// open blocks forever, /dev/zero never ends), not a timing assertion.
func readNoHang(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := ReadFile(path); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("ReadFile(%s) has not returned after 30s", path)
		return nil
	}
}

func TestReadFileRefusesDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	err := readNoHang(t, "/dev/zero")
	if !errors.Is(err, safefile.ErrNotRegular) || err.Error() != "env_file /dev/zero is a character device, not a regular file" {
		t.Errorf("ReadFile(/dev/zero) = %v", err)
	}
}

func TestReadFileRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".env")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	err := readNoHang(t, p)
	if !errors.Is(err, safefile.ErrNotRegular) || err.Error() != "env_file "+p+" is a FIFO, not a regular file" {
		t.Errorf("ReadFile(fifo) = %v", err)
	}
}
