package extents

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFileExtents: on a reflink filesystem (BINKY_TEST_REFLINK_DIR, the
// XFS mount of scripts/testenv) a reflinked copy's bytes are all shared,
// a plain copy's none; a file off it (t.TempDir) shares nothing either.
func TestFileExtents(t *testing.T) {
	dir := os.Getenv("BINKY_TEST_REFLINK_DIR")
	if dir == "" {
		t.Skip("set BINKY_TEST_REFLINK_DIR to a directory on a reflink filesystem (scripts/testenv up mounts one at /tmp/binky-testenv/reflink)")
	}
	work, err := os.MkdirTemp(dir, "fiemap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	src := filepath.Join(work, "src")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	clone, plain := filepath.Join(work, "clone"), filepath.Join(work, "plain")
	if out, err := exec.Command("cp", "--reflink=always", src, clone).CombinedOutput(); err != nil {
		t.Fatalf("cp --reflink=always: %v\n%s", err, out)
	}
	if err := os.WriteFile(plain, bytes.Clone(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		path       string
		wantShared bool
	}{{clone, true}, {src, true}, {plain, false}} {
		mapped, shared, err := File(tc.path)
		if err != nil {
			t.Fatalf("File(%s): %v", tc.path, err)
		}
		if mapped < int64(len(data)) {
			t.Errorf("%s: %d bytes mapped; want %d", filepath.Base(tc.path), mapped, len(data))
		}
		if got := shared == mapped; got != tc.wantShared || (!tc.wantShared && shared != 0) {
			t.Errorf("%s: %d of %d bytes shared; want shared %v", filepath.Base(tc.path), shared, mapped, tc.wantShared)
		}
	}
	m, s, err := Dir(work)
	if err != nil || m < 3*int64(len(data)) || s != 2*int64(len(data)) {
		t.Errorf("Dir: %d mapped, %d shared, %v; want 3 MiB mapped, 2 MiB shared", m, s, err)
	}
}
