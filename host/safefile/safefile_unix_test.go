//go:build !windows

package safefile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hangLimit only detects a hang: each call below returns at once or
// blocks forever, never anything in between.
const hangLimit = 30 * time.Second

// noHang runs fn in a goroutine and fails the test if it has not returned
// within hangLimit.
func noHang(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangLimit):
		t.Fatalf("%s has not returned after %s: it blocks", what, hangLimit)
		return nil
	}
}

func TestRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	// Whatever happens, do not leave a goroutine blocked on the FIFO.
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	err := noHang(t, "ReadRegular(fifo)", func() error { _, err := ReadRegular(p, 100); return err })
	if !errors.Is(err, ErrNotRegular) || err.Error() != p+" is a FIFO, not a regular file" {
		t.Errorf("ReadRegular(fifo) = %v; want %s is a FIFO, not a regular file", err, p)
	}
	// Through a symlink too.
	link := filepath.Join(filepath.Dir(p), "link")
	os.Symlink(p, link)
	err = noHang(t, "OpenRegular(link to fifo)", func() error { _, err := OpenRegular(link); return err })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenRegular(link to fifo) = %v; want ErrNotRegular", err)
	}
}

func TestRefusesDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadRegular("/dev/zero", 1<<20)
	if !errors.Is(err, ErrNotRegular) || err.Error() != "/dev/zero is a character device, not a regular file" {
		t.Errorf("ReadRegular(/dev/zero) = %v", err)
	}
	link := filepath.Join(t.TempDir(), "zero")
	os.Symlink("/dev/zero", link)
	if _, err := ReadRegular(link, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadRegular(link to /dev/zero) = %v; want ErrNotRegular", err)
	}
}

func TestRefusesSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "sf") // short: socket paths are bounded
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Skip("unix socket:", err)
	}
	defer ln.Close()
	err = noHang(t, "ReadRegular(socket)", func() error { _, err := ReadRegular(p, 100); return err })
	if !errors.Is(err, ErrNotRegular) || err.Error() != p+" is a socket, not a regular file" {
		t.Errorf("ReadRegular(socket) = %v; want %s is a socket, not a regular file", err, p)
	}
}

func TestOpenRegularIsBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	f, err := OpenRegular(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&syscall.O_NONBLOCK != 0 {
		t.Error("OpenRegular left O_NONBLOCK set")
	}
}

func TestReadRegularNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("abc"), 0o644)
	if got, err := ReadRegularNoFollow(file, 10); err != nil || string(got) != "abc" {
		t.Errorf("ReadRegularNoFollow(regular file) = %q, %v; want abc", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal("mkfifo:", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	for _, target := range []string{file, "/dev/zero", fifo, filepath.Join(dir, "missing")} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		err := noHang(t, "ReadRegularNoFollow(link to "+target+")", func() error { _, err := ReadRegularNoFollow(link, 1<<20); return err })
		if want := link + " is a symlink, not a regular file"; !errors.Is(err, ErrNotRegular) || err.Error() != want {
			t.Errorf("ReadRegularNoFollow(link to %s) = %v; want %s", target, err, want)
		}
	}
	err := noHang(t, "ReadRegularNoFollow(fifo)", func() error { _, err := ReadRegularNoFollow(fifo, 10); return err })
	if !errors.Is(err, ErrNotRegular) || err.Error() != fifo+" is a FIFO, not a regular file" {
		t.Errorf("ReadRegularNoFollow(fifo) = %v; want a FIFO, not a regular file", err)
	}
}
