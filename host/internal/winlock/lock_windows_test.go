//go:build windows

package winlock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestLockExcludesAndKeepsContentReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.pid")
	a, b := open(t, path), open(t, path)
	if ok, err := TryLock(a, true); !ok || err != nil {
		t.Fatalf("first lock = %v, %v; want true, nil", ok, err)
	}
	a.WriteAt([]byte("1234\n"), 0)
	if ok, err := TryLock(b, true); ok || err != nil {
		t.Fatalf("second exclusive lock = %v, %v; want false, nil", ok, err)
	}
	if ok, err := TryLock(b, false); ok || err != nil {
		t.Fatalf("shared lock under an exclusive one = %v, %v; want false, nil", ok, err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "1234\n" {
		t.Fatalf("content while locked = %q, %v; want %q", got, err, "1234\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := Lock(ctx, b); err == nil {
		t.Fatal("Lock succeeded while another handle holds the lock")
	}
	a.Close() // the lock goes with the handle
	if err := Lock(context.Background(), b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
	Unlock(b)
	if ok, _ := TryLock(open(t, path), false); !ok {
		t.Fatal("shared lock after Unlock failed")
	}
}
