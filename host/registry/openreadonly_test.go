package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenReadOnly: OpenReadOnly reads a registry at this binary's
// schema, a daemon's open one included (its newest rows only in the
// -wal), and writes nothing: no byte of the file, no -wal or -shm where
// there was none, no file where there was none. Writes fail with
// ErrReadOnly and Reopen does not make it writable. A newer, foreign or
// older registry is refused.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	seed := func(t *testing.T, path string) *Registry {
		t.Helper()
		r, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "main", Branch: "main", State: "up"}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name   string
		make   func(t *testing.T, path string) // leaves path as the reader finds it
		worlds int
		refuse string // else the error says this
		is     error
	}{
		{name: "stopped cleanly", worlds: 1, make: func(t *testing.T, path string) { seed(t, path).Close() }},
		{name: "a daemon has it open", worlds: 2, make: func(t *testing.T, path string) {
			r := seed(t, path)
			t.Cleanup(func() { r.Close() })
			if _, err := r.UpsertWorktree(ctx, &Worktree{Project: "shop", Name: "feat", Branch: "feat", State: "up"}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "missing", make: func(*testing.T, string) {}, refuse: "read-only", is: fs.ErrNotExist},
		{name: "newer", is: ErrNewerSchema, refuse: fmt.Sprintf("schema version is %d", SchemaVersion+1), make: func(t *testing.T, path string) {
			seed(t, path).Close()
			rawExec(t, path, fmt.Sprintf("PRAGMA user_version = %d;", SchemaVersion+1))
		}},
		{name: "older", refuse: "its schema version is 6 and this binky needs", make: func(t *testing.T, path string) {
			seed(t, path).Close()
			rawExec(t, path, "PRAGMA user_version = 6;")
		}},
		{name: "foreign", is: ErrNotRegistry, refuse: "another program", make: func(t *testing.T, path string) {
			rawExec(t, path, "PRAGMA application_id = 1234; CREATE TABLE t (x);")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			tt.make(t, path)
			before := snapshot(t, dir)

			r, err := OpenReadOnly(ctx, path)
			if tt.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refuse) || (tt.is != nil && !errors.Is(err, tt.is)) {
					t.Fatalf("OpenReadOnly: %v; want a refusal saying %q (errors.Is %v)", err, tt.refuse, tt.is)
				}
			} else {
				if err != nil {
					t.Fatalf("OpenReadOnly: %v", err)
				}
				wts, err := r.Worktrees(ctx)
				if err != nil || len(wts) != tt.worlds {
					t.Fatalf("Worktrees: %d, %v; want the %d the registry holds", len(wts), err, tt.worlds)
				}
				if err := r.SetWorktreeState(ctx, wts[0].ID, "down"); !errors.Is(err, ErrReadOnly) {
					t.Errorf("a write: %v; want ErrReadOnly", err)
				}
				if err := r.Reopen(ctx); err == nil || r.ReadOnly() == nil {
					t.Errorf("Reopen: %v, read-only %v; want it refused and the registry still read-only", err, r.ReadOnly())
				}
				r.Close()
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("OpenReadOnly changed the home:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot describes dir's files: each name, size and a digest of its
// bytes (the -shm a daemon keeps changes as it reads; it is named only).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		fmt.Fprintf(&b, "%s ", e.Name())
		if strings.HasSuffix(e.Name(), "-shm") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "(%d bytes, sha256 %x) ", len(data), sha256.Sum256(data))
	}
	return b.String()
}
