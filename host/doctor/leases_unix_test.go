//go:build !windows

package doctor

import (
	"context"
	"github.com/binkyhq/binky/internal/testroot"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeasesCheckRefusedDir: a lease directory another user (not root)
// owns fails, with the fix.
func TestLeasesCheckRefusedDir(t *testing.T) {
	t.Parallel()
	testroot.Need(t, "to make a directory another user owns")
	dir := filepath.Join(t.TempDir(), "leases")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, fs.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	got := checkLeases(context.Background(), &Env{LeaseDir: dir})
	if len(got) != 1 || got[0].Status != StatusFail || !strings.Contains(got[0].Message, "belongs to uid 65534") ||
		!strings.Contains(got[0].Fix, "sudo chown root:root "+dir) {
		t.Errorf("a lease directory of uid 65534: %+v; want a failure with the chown fix", got)
	}
}
