package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/ports"
)

// TestLeasesCheck: a store with nothing wrong is ok; a lease file binky
// does not count is a warning that names it, its owner and why, with a fix
// for this user's own file.
func TestLeasesCheck(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "leases")
	l, err := ports.OpenLeases(dir, ports.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	fs := checkLeases(context.Background(), &Env{LeaseDir: dir})
	if len(fs) != 1 || fs[0].Status != StatusOK || !strings.Contains(fs[0].Message, "0 port leases in "+dir) {
		t.Fatalf("an empty store: %+v; want one ok", fs)
	}
	rep, err := ports.InspectLeases(dir)
	if err != nil || rep.Mine == "" {
		t.Fatalf("InspectLeases = %+v, %v", rep, err)
	}
	junk := filepath.Join(rep.Mine, "block-30000-30001.json")
	if err := os.WriteFile(junk, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs = checkLeases(context.Background(), &Env{LeaseDir: dir})
	if len(fs) != 1 || fs[0].Status != StatusWarn ||
		!strings.HasPrefix(fs[0].Message, "ignored port lease "+junk+" (owner ") ||
		!strings.Contains(fs[0].Message, "it names ports 0-0") || fs[0].Fix != "rm "+junk {
		t.Errorf("a junk lease: %+v; want a warning naming %s, its owner and why, fixed by rm", fs, junk)
	}
}
