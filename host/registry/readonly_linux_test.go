package registry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// smallTmpfs mounts a tmpfs of size (e.g. "2m") on a new directory and
// unmounts it at cleanup. It needs root: without it the test skips, saying
// why, except under CI=true, where it fails.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	need := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs a tmpfs it can fill: %s", why)
		}
		t.Skipf("skipped: this test needs a tmpfs it can fill: %s", why)
	}
	if os.Geteuid() != 0 {
		need("mounting one takes root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		need("mount: " + err.Error() + ": " + string(bytes.TrimSpace(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file into dir until the file system has no space left,
// and returns what frees it again.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		_, err := f.Write(buf)
		if err == nil {
			continue
		}
		f.Close()
		if why := Unwritable(dir); why == nil {
			t.Fatalf("filling %s stopped with %v, and it still takes writes", dir, err)
		}
		break
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

func copyInto(t *testing.T, from, dir string, suffixes ...string) {
	t.Helper()
	for _, s := range suffixes {
		in, err := os.Open(from + s)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dir, FileName+s), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenOnFullDisk: a registry at the current schema, on a disk filled
// after it was made, opens — read-only where opening for writing needs
// room — and shows everything it holds, including what a killed daemon
// left in the -wal; a write is refused with ErrReadOnly naming the full
// disk; once space is freed, Reopen makes it writable again.
func TestOpenOnFullDisk(t *testing.T) {
	cases := []struct {
		name  string
		files []string // what of the made registry the full disk holds
		// readOnly: opening it for writing needs room it does not have.
		readOnly bool
		worlds   int
	}{
		{"stopped cleanly", []string{""}, true, 1},
		{"daemon killed", []string{"", "-wal", "-shm"}, false, 2},
		{"daemon killed, no -shm", []string{"", "-wal"}, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			src := filepath.Join(t.TempDir(), FileName)
			made, err := Open(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := made.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "main", Branch: "main", State: "up"}); err != nil {
				t.Fatal(err)
			}
			dir := smallTmpfs(t, "2m")
			if len(c.files) == 1 {
				made.Close() // checkpointed: the main file is everything
				copyInto(t, src, dir, c.files...)
			} else {
				// What a killed daemon leaves: the newest row only in the -wal.
				if _, err := made.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat", Branch: "feat", State: "up"}); err != nil {
					t.Fatal(err)
				}
				copyInto(t, src, dir, c.files...)
				made.Close()
			}
			path := filepath.Join(dir, FileName)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			free := fill(t, dir)

			r, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("Open on a full disk: %v", err)
			}
			defer r.Close()
			why := r.ReadOnly()
			if (why != nil) != c.readOnly {
				t.Fatalf("ReadOnly() = %v; want read-only %v", why, c.readOnly)
			}
			wts, err := r.Worktrees(ctx)
			if err != nil {
				t.Fatalf("Worktrees on a full disk: %v", err)
			}
			if len(wts) != c.worlds {
				t.Errorf("got %d worlds; want the %d the registry holds", len(wts), c.worlds)
			}
			if c.readOnly {
				var uw *UnwritableError
				if !errors.As(why, &uw) || uw.Kind != DiskFull {
					t.Fatalf("ReadOnly() = %v; want an *UnwritableError for a full disk", why)
				}
				err := r.SetWorktreeState(ctx, wts[0].ID, "down")
				if !errors.Is(err, ErrReadOnly) || !errors.Is(err, uw.Err) {
					t.Errorf("a write to the read-only registry: %v; want ErrReadOnly naming the full disk", err)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
					t.Errorf("opening on a full disk changed %s", path)
				}
				if err := r.Reopen(ctx); err == nil {
					t.Errorf("Reopen on a disk still full: nil; want why it is still read-only")
				}
			}

			free()
			if err := r.Reopen(ctx); err != nil {
				t.Fatalf("Reopen once space is freed: %v", err)
			}
			if r.ReadOnly() != nil {
				t.Fatalf("still read-only after Reopen: %v", r.ReadOnly())
			}
			if err := r.SetWorktreeState(ctx, wts[0].ID, "down"); err != nil {
				t.Fatalf("a write after space is freed: %v", err)
			}
			if got, err := r.Worktrees(ctx); err != nil || len(got) != len(wts) {
				t.Errorf("after reopening: %d worlds, %v; want %d", len(got), err, len(wts))
			}
		})
	}
}

// TestOpenOlderSchemaOnFullDisk: a registry that needs migrating cannot be
// opened read-only, and the refusal says both why (the full disk) and
// what it would have to write.
func TestOpenOlderSchemaOnFullDisk(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), FileName)
	made, err := Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	made.Close()
	rawExec(t, src, "PRAGMA user_version = 6;")
	dir := smallTmpfs(t, "2m")
	copyInto(t, src, dir, "")
	fill(t, dir)
	_, err = Open(ctx, filepath.Join(dir, FileName))
	if err == nil {
		t.Fatal("Open of an older schema on a full disk: nil error; want a refusal")
	}
	for _, want := range []string{"full disk", "schema version is 6"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
