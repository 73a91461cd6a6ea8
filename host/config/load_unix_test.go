//go:build !windows

package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/safefile"
)

// loadNoHang loads path in a goroutine and fails the test when it has not
// returned within 30s: a hang detector (a FIFO's open blocks forever), not
// a timing assertion.
func loadNoHang(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, _, err := LoadContext(context.Background(), path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("Load(%s) has not returned after 30s: it blocks", path)
		return nil
	}
}

// unblockFIFO opens p for writing and closes it, releasing a reader a
// regression left blocked, so the test binary can end.
func unblockFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

func TestLoadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, p)
	err := loadNoHang(t, p)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("Load(fifo) = %v; want a *LoadError wrapping safefile.ErrNotRegular", err)
	}
	if want := p + ": cannot read: is a FIFO, not a regular file"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load(fifo) = %q; want it to start %q", err, want)
	}
	// Find still finds it (it is not a directory), and Load refuses it.
	if got, err := Find(dir); err != nil || got != p {
		t.Errorf("Find = %q, %v; want %q", got, err, p)
	}
	// ReadFile (the daemon's status path) refuses it the same way.
	done := make(chan error, 1)
	go func() { _, err := ReadFile(p); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadFile(fifo) = %v; want ErrNotRegular", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ReadFile(fifo) blocks")
	}
}

func TestLoadRefusesDevices(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	err := loadNoHang(t, p)
	if want := p + ": cannot read: is a character device, not a regular file"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load(symlink to /dev/zero) = %v; want %q", err, want)
	}
	// A symlink to a regular file is fine.
	real := filepath.Join(dir, "real.toml")
	os.WriteFile(real, []byte("[project]\nname = \"a\"\n"), 0o644)
	link := filepath.Join(dir, "link.toml")
	os.Symlink(real, link)
	if _, ds, err := Load(link); err != nil || ds.HasErrors() {
		t.Errorf("Load(symlink to a file) = %v, %v", ds, err)
	}
}

func TestLoadSparseFileRefusedUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	_, _, err = Load(p)
	if !errors.Is(err, errTooLarge) || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("Load(100 MB sparse) = %v; want larger than 1048576 bytes", err)
	}
}
