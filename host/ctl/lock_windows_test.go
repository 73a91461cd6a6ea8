//go:build windows

package ctl

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/internal/winlock"
)

func TestLockStateWindows(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, PidName)
	if held, _, known, err := lockState(home); held || !known || err != nil {
		t.Fatalf("no pid file: held=%v known=%v err=%v; want false, true, nil", held, known, err)
	}
	os.WriteFile(path, []byte("56\n"), 0o600)
	if held, pid, _, err := lockState(home); held || pid != 56 || err != nil {
		t.Fatalf("stale pid file: held=%v pid=%d err=%v; want false, 56, nil", held, pid, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := winlock.TryLock(f, true); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if held, pid, known, err := lockState(home); !held || pid != 56 || !known || err != nil {
		t.Fatalf("held lock: held=%v pid=%d known=%v err=%v; want true, 56, true, nil", held, pid, known, err)
	}
	// A start under way: lockState does not look.
	unlock, err := startLock(context.Background(), home)
	if err != nil {
		t.Fatal(err)
	}
	if _, busy := tryStartLock(home); !busy {
		t.Error("tryStartLock under a held start lock: not busy")
	}
	if _, _, known, _ := lockState(home); known {
		t.Error("lockState during a start: known; want false")
	}
	unlock()
	if u, busy := tryStartLock(home); busy {
		t.Error("tryStartLock after unlock: busy")
	} else {
		u()
	}
}
