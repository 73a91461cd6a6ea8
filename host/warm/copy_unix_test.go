//go:build !windows

package warm

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/safefile"
)

// noHang fails the test when fn has not returned within 30s: a hang
// detector (a FIFO's open blocks forever), not a timing assertion.
func noHang(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("has not returned after 30s: it blocks")
	}
}

func unblockFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

// TestCopySkipsSpecialFiles: a FIFO or socket that a copy glob matches, or
// that a matched directory holds, is skipped and reported, never opened;
// the regular files around it are copied.
func TestCopySkipsSpecialFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write(t, src, "cache/a.txt", "a")
	if err := syscall.Mkfifo(filepath.Join(src, "cache", "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, filepath.Join(src, "cache", "pipe"))
	if err := syscall.Mkfifo(filepath.Join(src, "top.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	unblockFIFO(t, filepath.Join(src, "top.fifo"))
	// Sockets need a short path.
	sdir, err := os.MkdirTemp("", "wm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sdir)
	ln, err := net.Listen("unix", filepath.Join(sdir, "s"))
	if err != nil {
		t.Skip("unix socket:", err)
	}
	defer ln.Close()
	write(t, sdir, "f", "f")

	var res *Result
	noHang(t, func() {
		res, err = Copy(context.Background(), src, dst, []string{"cache", "top.fifo"}, Options{Tracked: noneTracked, NoClone: true})
	})
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if !slices.Equal(res.Copied, []string{"cache"}) || res.Files != 1 {
		t.Errorf("copied %v (%d files); want cache with its one file", res.Copied, res.Files)
	}
	if want := []string{"cache/pipe (a FIFO)", "top.fifo (a FIFO)"}; !slices.Equal(res.Skipped, want) {
		t.Errorf("skipped %q; want %q", res.Skipped, want)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "cache", "a.txt")); err != nil || string(b) != "a" {
		t.Errorf("cache/a.txt: %q, %v", b, err)
	}
	for _, p := range []string{"cache/pipe", "top.fifo"} {
		if _, err := os.Lstat(filepath.Join(dst, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was made in the new worktree (%v)", p, err)
		}
	}

	// A socket, matched directly.
	dst2 := t.TempDir()
	noHang(t, func() {
		res, err = Copy(context.Background(), sdir, dst2, []string{"*"}, Options{Tracked: noneTracked, NoClone: true})
	})
	if err != nil || !slices.Equal(res.Copied, []string{"f"}) || !slices.Equal(res.Skipped, []string{"s (a socket)"}) {
		t.Errorf("Copy of a socket and a file: copied %v, skipped %v, %v; want f copied and s skipped", res.Copied, res.Skipped, err)
	}
}

// TestCopyFileRefusesFIFO: a source that became a FIFO after the walk is
// refused by name, clone or byte copy, and not waited on.
func TestCopyFileRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "was-a-file")
	if err := syscall.Mkfifo(from, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, from)
	for _, noClone := range []bool{false, true} {
		c := &copier{ctx: context.Background(), res: &Result{}, noClone: noClone}
		var err error
		noHang(t, func() { err = c.file(from, filepath.Join(dir, "dest"), entry{mode: 0o644}) })
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("noClone %v: copy of a FIFO = %v; want ErrNotRegular", noClone, err)
		}
		os.Remove(filepath.Join(dir, "dest"))
	}
}
