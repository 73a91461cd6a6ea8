package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/certs"
	"github.com/binkyhq/binky/host/registry"
)

// TestCheckApex: a world whose project sets apex = "test" with https gets
// a finding for how its held name resolves, and one for the .test CA:
// missing (binky trust --zone test), then present; a home with only
// .localhost names says so.
func TestCheckApex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	e := &Env{Home: home, GOOS: "linux"}
	if got := checkApex(ctx, e); len(got) != 1 || got[0].Status != StatusOK {
		t.Fatalf("an empty home: %+v; want one ok", got)
	}
	reg, err := registry.Open(ctx, filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cfgPath := filepath.Join(home, "binky.toml")
	if err := os.WriteFile(cfgPath, []byte("[project]\nname = \"acme\"\napex = \"test\"\nhttps = true\n[services.web]\ncmd = \"x\"\nurl = \"web\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "feat", Branch: "feat", ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.ClaimHosts(ctx, w.ID, map[string]string{"web.feat.acme.test": "web"}); err != nil {
		t.Fatal(err)
	}
	got := checkApex(ctx, e)
	if len(got) != 2 || !strings.Contains(got[0].Message, "web.feat.acme.test") {
		t.Fatalf("findings %+v; want the held name's resolution and the CA", got)
	}
	if got[0].Status != StatusOK && !strings.Contains(got[0].Fix, "/etc/hosts") {
		t.Errorf("a name that does not resolve: fix %q; want the resolver entry to add", got[0].Fix)
	}
	if got[1].Status != StatusWarn || got[1].Fix != "binky trust --zone test" {
		t.Errorf("no .test CA: %+v; want a warning with binky trust --zone test", got[1])
	}
	if _, err := certs.LoadOrCreateZoneCA(filepath.Join(home, "certs"), "test"); err != nil {
		t.Fatal(err)
	}
	if got := checkApex(ctx, e); !strings.Contains(got[1].Message, "the local CA for .test") || strings.Contains(got[1].Message, "no local CA") {
		t.Errorf("with the CA made: %+v", got[1])
	}
}
