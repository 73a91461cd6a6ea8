package sqliteadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// owned is target with an owner (a binky home) and its label.
func owned(dataDir, slice, owner string, config map[string]any) sdk.Target {
	t := target(dataDir, slice, config)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// claimFile reads the claim file beside the database at db; "" when there
// is none.
func claimFile(t *testing.T, db string) string {
	t.Helper()
	b, err := os.ReadFile(db + claimSuffix)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantConflict(t *testing.T, what string, err error) {
	t.Helper()
	if code := sdk.CodeOf(err); err == nil || code != sdk.CodeConflict {
		t.Fatalf("%s: got %v (code %s); want code conflict", what, err, code)
	}
}

// TestClaimRecorded: provision writes the owner's claim beside the new
// database, and nothing of it is inside the database.
func TestClaimRecorded(t *testing.T) {
	t.Parallel()
	tg := owned(t.TempDir(), "acme_main", "home-a", nil)
	path := provisionSlice(t, tg)
	if got, want := claimFile(t, path), tg.Claim()+"\n"; got != want {
		t.Errorf("claim file = %q; want %q", got, want)
	}
	if n := queryInt(t, path, "SELECT count(*) FROM sqlite_master"); n != 0 {
		t.Errorf("the new database holds %d schema objects; want none (the claim lives beside it)", n)
	}
	if fi, err := os.Stat(path + claimSuffix); err != nil || fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("claim file mode: %v, %v; want readable by all", fi.Mode(), err)
	}
}

// TestRefusedCallsLeaveTheSlice: in a directory two homes share (config
// dir absolute), another home's provision, resolve, destroy and clone
// are refused with code conflict naming the owner, and the database, its
// data and its claim stay as they were.
func TestRefusedCallsLeaveTheSlice(t *testing.T) {
	t.Parallel()
	shared := map[string]any{"dir": t.TempDir()}
	mine, theirs := owned(t.TempDir(), "acme_main", "home-a", shared), owned(t.TempDir(), "acme_main", "home-b", shared)
	path := provisionSlice(t, mine)
	execSQL(t, path, "CREATE TABLE kept(x)", "INSERT INTO kept VALUES (1)")
	ctx := context.Background()

	_, err := New().Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
	wantConflict(t, "another home's provision", err)
	if msg := err.Error(); !strings.Contains(msg, "home-a") || !strings.Contains(msg, "home of home-a") || !strings.Contains(msg, path) {
		t.Errorf("refusal %q; want it to name the owning home, its label and %s", msg, path)
	}
	_, err = New().Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: theirs})
	wantConflict(t, "another home's resolve", err)
	_, err = New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
	wantConflict(t, "another home's destroy", err)

	// Another home may not read the slice by cloning it, nor replace it
	// with a clone of its own slice.
	into := theirs
	into.Slice = "acme_feat"
	_, err = New().Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: into, Source: "acme_main"})
	wantConflict(t, "another home's clone of the slice", err)
	if _, err := os.Stat(filepath.Join(shared["dir"].(string), "acme_feat.db")); !os.IsNotExist(err) {
		t.Errorf("the refused clone made its target: %v", err)
	}
	theirsToo := theirs
	theirsToo.Slice = "acme_theirs"
	provisionSlice(t, theirsToo)
	onto := theirs
	_, err = New().Clone(ctx, &sdk.CloneRequest{Header: hdr(), Target: onto, Source: "acme_theirs"})
	wantConflict(t, "another home's clone onto the slice", err)

	if n := queryInt(t, path, "SELECT count(*) FROM kept"); n != 1 {
		t.Errorf("rows after the refusals: got %d; want 1", n)
	}
	if got := claimFile(t, path); got != mine.Claim()+"\n" {
		t.Errorf("claim after the refusals = %q; want %q", got, mine.Claim()+"\n")
	}

	// The owner destroys it, claim and all; then the name is free.
	if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("the owner's destroy: %v", err)
	}
	for _, p := range []string{path, path + claimSuffix} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("after the owner's destroy, %s: %v; want it gone", p, err)
		}
	}
	provisionSlice(t, theirs)
	if got := claimFile(t, path); got != theirs.Claim()+"\n" {
		t.Errorf("claim of the re-made slice = %q; want %q", got, theirs.Claim()+"\n")
	}
}

// TestCloneClaimsTheTarget: the clone's target carries the claim of the
// home that cloned, never the source's: the source here is an unclaimed
// template another home left (a legacy one may be read), and the target
// existed, claimed by the cloning home.
func TestCloneClaimsTheTarget(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	src := provisionSlice(t, owned(data, "acme_golden", "home-a", nil))
	execSQL(t, src, schema, "INSERT INTO rows(batch) VALUES (1)", "UPDATE counter SET n = 1")
	mine := owned(data, "acme_feat", "home-a", nil)
	mine.OwnerLabel = "the feature home"
	dst := provisionSlice(t, mine)

	if _, err := New().Clone(context.Background(), &sdk.CloneRequest{Header: hdr(), Target: mine, Source: "acme_golden"}); err != nil {
		t.Fatalf("clone: %v", err)
	}
	if n := checkCopy(t, dst); n != 1 {
		t.Errorf("rows in the clone: got %d; want 1", n)
	}
	if got := claimFile(t, dst); got != mine.Claim()+"\n" {
		t.Errorf("claim of the clone = %q; want %q", got, mine.Claim()+"\n")
	}

	// An unclaimed source (made without an owner) may be cloned by anyone,
	// and the new target is claimed by the home that cloned it.
	legacy := provisionSlice(t, target(data, "acme_legacy", nil))
	execSQL(t, legacy, schema)
	other := owned(data, "acme_other", "home-b", nil)
	if _, err := New().Clone(context.Background(), &sdk.CloneRequest{Header: hdr(), Target: other, Source: "acme_legacy"}); err != nil {
		t.Fatalf("clone of an unclaimed source: %v", err)
	}
	otherPath := filepath.Join(data, "acme", "acme_other.db")
	if got := claimFile(t, otherPath); got != other.Claim()+"\n" {
		t.Errorf("claim of the new clone = %q; want %q", got, other.Claim()+"\n")
	}
	if got := claimFile(t, legacy); got != "" {
		t.Errorf("cloning claimed the source: %q", got)
	}
	entries, err := os.ReadDir(filepath.Join(data, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestAdoption: a database with no claim file (what an older host left),
// or with a claim file that holds no claim, is adopted by the first home
// that provisions it, keeping its data, and refused to the next.
func TestAdoption(t *testing.T) {
	t.Parallel()
	for _, junk := range []string{"", "written by hand\n"} {
		data := t.TempDir()
		path := provisionSlice(t, target(data, "acme_old", nil))
		if got := claimFile(t, path); got != "" {
			t.Fatalf("claim recorded for a request without an owner: %q", got)
		}
		execSQL(t, path, "CREATE TABLE kept(x)", "INSERT INTO kept VALUES (1)")
		if junk != "" {
			if err := os.WriteFile(path+claimSuffix, []byte(junk), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mine := owned(data, "acme_old", "home-a", nil)
		res, err := New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
		if err != nil {
			t.Fatalf("adopt (claim file %q): %v", junk, err)
		}
		if res.Existed == nil || !*res.Existed {
			t.Errorf("adoption said existed %v; want true", res.Existed)
		}
		if got := claimFile(t, path); got != mine.Claim()+"\n" {
			t.Errorf("claim after adoption = %q; want %q", got, mine.Claim()+"\n")
		}
		if n := queryInt(t, path, "SELECT count(*) FROM kept"); n != 1 {
			t.Errorf("rows after adoption: got %d; want 1", n)
		}
		_, err = New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: owned(data, "acme_old", "home-b", nil)})
		wantConflict(t, "another home's provision after adoption", err)
	}
}

// TestNoOwner: a request without an owner (a host that predates claims)
// is refused nothing and records nothing, and its destroy removes the
// claim with the database.
func TestNoOwner(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path := provisionSlice(t, owned(data, "acme_x", "home-a", nil))
	legacy := target(data, "acme_x", nil)
	provisionSlice(t, legacy)
	if got := claimFile(t, path); got != owned(data, "acme_x", "home-a", nil).Claim()+"\n" {
		t.Errorf("a request without an owner changed the claim to %q", got)
	}
	if _, err := New().Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: legacy}); err != nil {
		t.Fatalf("destroy without an owner: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left after destroy: %v; want none", names)
	}
}

// TestOwnLabelRefreshed: the owner's provision with a new label (the home
// moved) rewrites the claim; the owner id alone decides.
func TestOwnLabelRefreshed(t *testing.T) {
	t.Parallel()
	tg := owned(t.TempDir(), "acme_main", "home-a", nil)
	path := provisionSlice(t, tg)
	tg.OwnerLabel = "moved elsewhere"
	provisionSlice(t, tg)
	if got := claimFile(t, path); got != tg.Claim()+"\n" {
		t.Errorf("claim = %q; want %q", got, tg.Claim()+"\n")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"acme_main.db", "acme_main.db" + claimSuffix}) {
		t.Errorf("files: %v; want the database and its claim", names)
	}
}

// TestClaimFileNotRegular: a claim path that is a directory is reported,
// not read as "unclaimed".
func TestClaimFileNotRegular(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tg := owned(data, "acme_main", "home-a", nil)
	if err := os.MkdirAll(filepath.Join(data, "acme", "acme_main.db"+claimSuffix), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: tg})
	wantConflict(t, "provision beside a directory in the claim's place", err)
	if _, err := os.Stat(filepath.Join(data, "acme", "acme_main.db")); !os.IsNotExist(err) {
		t.Errorf("the refused provision made the database: %v", err)
	}
}

// TestClaimRace: of several homes provisioning the same new slice at once,
// exactly one gets it; the others are refused, whatever the interleaving.
func TestClaimRace(t *testing.T) {
	t.Parallel()
	shared := map[string]any{"dir": t.TempDir()}
	const homes = 8
	errs := make([]error, homes)
	var wg sync.WaitGroup
	for i := range homes {
		wg.Go(func() {
			tg := owned(t.TempDir(), "acme_main", fmt.Sprintf("home-%d", i), shared)
			_, errs[i] = New().Provision(context.Background(), &sdk.ProvisionRequest{Header: hdr(), Target: tg})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("homes %d and %d both provisioned the slice", winner, i)
		case err == nil:
			winner = i
		case sdk.CodeOf(err) != sdk.CodeConflict:
			t.Errorf("home %d: %v; want ok or code conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no home provisioned the slice")
	}
	path := filepath.Join(shared["dir"].(string), "acme_main.db")
	if got, want := claimFile(t, path), owned("", "", fmt.Sprintf("home-%d", winner), nil).Claim()+"\n"; got != want {
		t.Errorf("claim = %q; want the winner's %q", got, want)
	}
}

// TestWriteClaimExclusive: creating a claim file where one exists fails
// with fs.ErrExist and leaves the file and no temporary file.
func TestWriteClaimExclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "acme_main.db"+claimSuffix)
	if err := writeClaim(p, "binky-owner:a", true); err != nil {
		t.Fatal(err)
	}
	if err := writeClaim(p, "binky-owner:b", true); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second exclusive write: %v; want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "binky-owner:a\n" {
		t.Errorf("claim file = %q; want the first", b)
	}
	if err := writeClaim(p, "binky-owner:c", false); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "binky-owner:c\n" {
		t.Errorf("claim file = %q; want the replacement", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory; want the claim alone", len(entries))
	}
}
