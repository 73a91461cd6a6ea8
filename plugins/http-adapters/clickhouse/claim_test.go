package clickhouse

import (
	"context"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// owned is tgt with an owner, as a host that records claims sends it.
func owned(admin, slice, owner string) sdk.Target {
	t := tgt(admin, slice, nil)
	t.Owner, t.OwnerLabel = owner, "home of "+owner
	return t
}

// claimOf reads the claim recorded for slice straight from the server.
func claimOf(t *testing.T, admin, slice string) string {
	t.Helper()
	got, err := query(t, admin, "SELECT count() FROM system.tables WHERE database = '"+ownersDB+"' AND name = '"+slice+"'")
	if err != nil {
		t.Fatal(err)
	}
	if got == "0" {
		return ""
	}
	got, err = query(t, admin, "SELECT claim FROM `"+ownersDB+"`.`"+slice+"`")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestClaimRecordedAndRefused (real server): provision records the claim
// in the owners database; another owner's provision, resolve and destroy
// are refused with code conflict, naming the owner, and the refused
// destroy leaves the database and its rows; the owner's destroy drops the
// database and the claim.
func TestClaimRecordedAndRefused(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("claim")
	mine, theirs := owned(admin, s, "home-a"), owned(admin, s, "home-b")
	t.Cleanup(func() { a.Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: mine}) })
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	}
	if got := claimOf(t, admin, s); got != mine.Claim() {
		t.Fatalf("claim on the server %q; want %q", got, mine.Claim())
	}
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := query(t, r.Address, "CREATE TABLE t (x UInt8) ENGINE = TinyLog"); err != nil {
		t.Fatal(err)
	}
	if _, err := query(t, r.Address, "INSERT INTO t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	for call, do := range map[string]func() error{
		"provision": func() error {
			_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
			return err
		},
		"resolve": func() error {
			_, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: theirs})
			return err
		},
		"destroy": func() error {
			_, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs})
			return err
		},
	} {
		err := do()
		if sdk.CodeOf(err) != sdk.CodeConflict || !strings.Contains(err.Error(), "home-a") {
			t.Errorf("%s by another owner: %v; want code conflict naming home-a", call, err)
		}
	}
	if got, err := query(t, admin, "SELECT count() FROM `"+s+"`.t"); err != nil || got != "2" {
		t.Errorf("rows after the refused destroy: %q, %v; want 2", got, err)
	}
	if got := claimOf(t, admin, s); got != mine.Claim() {
		t.Errorf("claim after the refusals %q; want %q", got, mine.Claim())
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatal(err)
	}
	if got := claimOf(t, admin, s); got != "" {
		t.Errorf("claim after the owner's destroy %q; want none", got)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs}); err != nil {
		t.Errorf("another owner's destroy of a slice that is gone: %v; want ok", err)
	}
}

// TestClaimAdoption (real server): a database made without an owner (an
// older host, or by hand) is adopted by the first owner's provision, which
// reports it existed; then it is refused to another. An older host (no
// owner) records and checks nothing.
func TestClaimAdoption(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("adopt")
	provisionT(t, a, admin, s, nil)
	if got := claimOf(t, admin, s); got != "" {
		t.Fatalf("a provision without an owner recorded %q", got)
	}
	mine, theirs := owned(admin, s, "home-a"), owned(admin, s, "home-b")
	p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatal(err)
	}
	if p.Existed == nil || !*p.Existed {
		t.Errorf("adopting provision: existed %v; want true", p.Existed)
	}
	if got := claimOf(t, admin, s); got != mine.Claim() {
		t.Errorf("claim after adoption %q; want %q", got, mine.Claim())
	}
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("another owner after adoption: %v; want code conflict", err)
	}
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, s, nil)}); err != nil {
		t.Errorf("resolve by an older host: %v", err)
	}
}

// TestStaleClaimReplaced (real server): a claim left for a database that
// was dropped by hand does not stop another owner from making the slice
// anew; that owner's claim replaces it.
func TestStaleClaimReplaced(t *testing.T) {
	admin := adminURL(t)
	a := New()
	s := testSlice("stale")
	old, fresh := owned(admin, s, "home-a"), owned(admin, s, "home-b")
	t.Cleanup(func() { a.Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: fresh}) })
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: old}); err != nil {
		t.Fatal(err)
	}
	if _, err := query(t, admin, "DROP DATABASE `"+s+"`"); err != nil {
		t.Fatal(err)
	}
	p, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: fresh})
	if err != nil {
		t.Fatalf("provision over a stale claim: %v", err)
	}
	if p.Existed == nil || *p.Existed {
		t.Errorf("provision over a stale claim: existed %v; want false", p.Existed)
	}
	if got := claimOf(t, admin, s); got != fresh.Claim() {
		t.Errorf("claim %q; want %q", got, fresh.Claim())
	}
}
