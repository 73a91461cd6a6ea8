//go:build !windows

package ports

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLeaseStoreModes: whatever the umask, the directory is made sticky
// and world-writable, the lock file world-writable and each lease
// world-readable, so every user's daemon can share them.
func TestLeaseStoreModes(t *testing.T) {
	// Not parallel: the umask is the process's.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "nested", "leases")
	l := openTestLeases(t, dir)
	h := newHome(t, "", l, [2]int{100, 199})
	reserve(t, h, "p", "w", 2)
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{
		{dir, fs.ModeDir | fs.ModeSticky | 0o777},
		{filepath.Join(dir, lockName), 0o666},
		{filepath.Join(dir, "block-100-101.json"), 0o644},
	} {
		fi, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.want {
			t.Errorf("%s: mode %v; want %v", c.path, fi.Mode(), c.want)
		}
	}
}

// TestLeaseDirRefused: a lease directory others could tamper with, or
// that is not one, is refused with the reason.
func TestLeaseDirRefused(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	tests := []struct {
		name     string
		make     func(t *testing.T, dir string)
		wantErr  string // "" = accepted
		needRoot bool
	}{
		{"symbolic link", func(t *testing.T, dir string) {
			must(t, os.Symlink(t.TempDir(), dir))
		}, "symbolic link", false},
		{"a file", func(t *testing.T, dir string) {
			must(t, os.WriteFile(dir, nil, 0o644))
		}, "not a directory", false},
		{"writable by others, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, 0o777))
		}, "writable by others", false},
		{"writable by the group, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, 0o775))
		}, "writable by others", false},
		{"another user's, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.Chown(dir, 65534, 65534))
		}, "belongs to uid 65534", true},
		{"another user's, sticky (the first user made it)", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, fs.ModeSticky|0o777))
			must(t, os.Chown(dir, 65534, 65534))
		}, "", true},
		{"private and mine", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
		}, "", false},
		{"lock file is a symbolic link", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			target := filepath.Join(t.TempDir(), "target")
			must(t, os.WriteFile(target, nil, 0o600))
			must(t, os.Symlink(target, filepath.Join(dir, lockName)))
		}, "symbolic link", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needRoot && !root {
				t.Skip("needs root, to make a directory another user owns")
			}
			dir := filepath.Join(t.TempDir(), "leases")
			tc.make(t, dir)
			_, err := OpenLeases(dir)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("OpenLeases = %v; want it accepted", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("OpenLeases = %v; want an error saying %q", err, tc.wantErr)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeaseOfAnotherUserIsHeld: a gone home's lease that this user cannot
// delete (another user's file in the sticky directory) is held, not
// reclaimed. The reserving home runs as nobody in a copy of this test
// binary, against root's lease, so it needs root.
func TestLeaseOfAnotherUserIsHeld(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to reserve as another user")
	}
	// Everything nobody must reach lives under a directory it may enter
	// (t.TempDir's parent is private to root).
	base, err := os.MkdirTemp("", "binky-ports-users-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	leaseDir := filepath.Join(base, "leases")
	l := openTestLeases(t, leaseDir)
	// Root's home leases 300-303, then is deleted: its lease is a gone
	// home's, but root's file.
	gone := filepath.Join(base, "gone")
	must(t, os.Mkdir(gone, 0o700))
	g := newHome(t, gone, l, [2]int{300, 303})
	reserve(t, g, "p", "w", 4)
	g.close()
	must(t, os.RemoveAll(gone))

	b, err := os.ReadFile(os.Args[0])
	must(t, err)
	bin := filepath.Join(base, "ports.test")
	must(t, os.WriteFile(bin, b, 0o755))
	home := filepath.Join(base, "nobody")
	must(t, os.Mkdir(home, 0o700))
	must(t, os.Chown(home, 65534, 65534))
	cmd := exec.Command(bin, "-test.run=^TestHelperNobody$")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "BINKY_PORTS_NOBODY_LEASES="+leaseDir, "BINKY_PORTS_NOBODY_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Skipf("cannot run the test binary as nobody here: %v", err)
	}
	if err != nil {
		t.Fatalf("reserve as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "port range exhausted") || !strings.Contains(string(out), "1 blocks leased by other binky homes") {
		t.Errorf("reserve as nobody said:\n%s\nwant the range exhausted by 1 block of another home", out)
	}
	if le := leaseFiles(t, l)["block-300-303.json"]; le == nil || le.HomeDir != filepath.Join(mustCanonical(t, base), "gone") {
		t.Errorf("root's lease is now %+v; want it kept", le)
	}
}

// TestHelperNobody is the process of TestLeaseOfAnotherUserIsHeld.
func TestHelperNobody(t *testing.T) {
	leases := os.Getenv("BINKY_PORTS_NOBODY_LEASES")
	if leases == "" {
		t.Skip("helper process for TestLeaseOfAnotherUserIsHeld")
	}
	h := newHome(t, os.Getenv("BINKY_PORTS_NOBODY_HOME"), openTestLeases(t, leases), [2]int{300, 303})
	_, _, err := h.a.Reserve(context.Background(), "q", "w", 4, [2]int{})
	fmt.Printf("reserve: %v\n", err)
	fmt.Println("uid " + strconv.Itoa(os.Getuid()))
}
