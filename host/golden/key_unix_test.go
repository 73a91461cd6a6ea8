//go:build !windows

package golden

import (
	"errors"
	"os"
	"path/filepath"
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

// TestInputsPassOverNonRegular: a FIFO, and symlinks to a FIFO and to
// /dev/zero, under an inputs glob are not files with content: they are
// passed over (never opened), and the key is what the regular files make.
func TestInputsPassOverNonRegular(t *testing.T) {
	root := t.TempDir()
	write(t, root, "db/migrations/001.sql", "CREATE TABLE a (id int);")
	clean := key(t, Spec{Inputs: []string{"db/**"}}, root)

	fifo := filepath.Join(root, "db", "migrations", "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, fifo)
	os.Symlink(fifo, filepath.Join(root, "db", "to-pipe"))
	os.Symlink("/dev/zero", filepath.Join(root, "db", "zero"))
	var k Key
	var err error
	noHang(t, func() { k, err = KeyOf(Spec{Inputs: []string{"db/**"}}, root) })
	if err != nil {
		t.Fatalf("KeyOf: %v", err)
	}
	if k.Sum != clean.Sum || len(k.Inputs) != 1 || k.Inputs[0].Path != "db/migrations/001.sql" {
		t.Errorf("key %s inputs %+v; want %s from the one regular file", k.Short(), k.Inputs, clean.Short())
	}
	// A glob naming only the FIFO matches no file.
	noHang(t, func() { k, err = KeyOf(Spec{Inputs: []string{"db/migrations/pipe"}}, root) })
	if err != nil || len(k.Inputs) != 1 || !k.Inputs[0].NoMatch {
		t.Errorf("inputs %+v, %v; want the glob as no match", k.Inputs, err)
	}
}

// TestHashFileRefusesFIFO: a path that became a FIFO between the listing
// and the read is refused by name, not opened and waited on.
func TestHashFileRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seed.sql")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, p)
	var err error
	noHang(t, func() { _, err = hashFile(p) })
	if !errors.Is(err, safefile.ErrNotRegular) || err.Error() != p+" is a FIFO, not a regular file" {
		t.Errorf("hashFile(fifo) = %v", err)
	}
}
