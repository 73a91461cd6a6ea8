package postgresadapter

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
)

// owned is target with an owner: the home "home-<owner>".
func owned(admin, slice, owner string, cfg map[string]any) sdk.Target {
	t := target(admin, slice, cfg)
	t.Owner, t.OwnerLabel = "home-"+owner, "/home/"+owner+"/.binky "+owner
	return t
}

// comment is the comment of database db, "" when none; the test fails
// when the database does not exist.
func comment(t *testing.T, c *pgx.Conn, db string) string {
	t.Helper()
	var s *string
	if err := c.QueryRow(t.Context(), "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", db).Scan(&s); err != nil {
		t.Fatalf("read the comment of database %s: %v", db, err)
	}
	if s == nil {
		return ""
	}
	return *s
}

func wantConflict(t *testing.T, what string, err error) {
	t.Helper()
	if got := sdk.CodeOf(err); got != sdk.CodeConflict {
		t.Errorf("%s: code %q; want %q (%v)", what, got, sdk.CodeConflict, err)
	}
}

// TestClaimIsTheDatabaseComment: provision records the owner's claim as the
// database's comment, a later provision by the same owner refreshes its
// label, and a host without an owner records nothing.
func TestClaimIsTheDatabaseComment(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	ac := adminConn(t, admin)
	s := testSlice(t, "claim")
	cleanupSlice(t, a, admin, s)
	mine := owned(admin, s, "a", nil)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("provision: %v", err)
	}
	if got := comment(t, ac, s); got != mine.Claim() {
		t.Errorf("comment %q; want the claim %q", got, mine.Claim())
	}
	moved := mine
	moved.OwnerLabel = "/elsewhere/.binky a"
	res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: moved})
	if err != nil {
		t.Fatalf("provision with a new label: %v", err)
	}
	if res.Existed == nil || !*res.Existed {
		t.Errorf("second provision: existed %v; want true", res.Existed)
	}
	if got := comment(t, ac, s); got != moved.Claim() {
		t.Errorf("comment %q after the label changed; want %q", got, moved.Claim())
	}

	legacy := testSlice(t, "legacy")
	provisionT(t, a, admin, legacy, nil)
	if got := comment(t, ac, legacy); got != "" {
		t.Errorf("a slice provisioned without an owner has the comment %q; want none", got)
	}
}

// TestClaimRefusalLeavesSliceWhole: another home's provision, resolve and
// destroy are refused with code conflict, and the database, its rows, its
// claim and (with owner_role) its role and password stay as they were.
func TestClaimRefusalLeavesSliceWhole(t *testing.T) {
	admin := testAdminURL(t)
	for _, cfg := range []map[string]any{nil, ownerRole} {
		t.Run(fmt.Sprintf("owner_role=%v", cfg != nil), func(t *testing.T) {
			a := New()
			ac := adminConn(t, admin)
			s := testSlice(t, "whole")
			cleanupSlice(t, a, admin, s)
			mine, theirs := owned(admin, s, "a", cfg), owned(admin, s, "b", cfg)
			if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("provision: %v", err)
			}
			r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine})
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			seed(t, r.Address, 5)
			password := func() string {
				var pw *string
				err := ac.QueryRow(t.Context(), "SELECT rolpassword FROM pg_authid WHERE rolname = $1", s).Scan(&pw)
				if errors.Is(err, pgx.ErrNoRows) {
					return "no role"
				}
				if err != nil {
					t.Fatal(err)
				}
				if pw == nil {
					return "no password"
				}
				return *pw
			}
			// Break the role's password: a refused call must not set it
			// again (a resolve by the owner would).
			if cfg != nil {
				exec1(t, ac, "ALTER ROLE "+ident(s)+" PASSWORD NULL")
			}
			pw := password()

			b := New()
			_, err = b.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "provision by another home", err)
			_, err = b.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "resolve by another home", err)
			_, err = b.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs})
			wantConflict(t, "destroy by another home", err)

			if got := comment(t, ac, s); got != mine.Claim() {
				t.Errorf("comment %q after the refusals; want %q", got, mine.Claim())
			}
			if got := password(); got != pw {
				t.Errorf("the role's password changed from %q to %q; a refused call touched the role", pw, got)
			}
			r, err = a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine})
			if err != nil {
				t.Fatalf("resolve by the owner after the refusals: %v", err)
			}
			if got := count(t, connect(t, r.Address), "SELECT count(*) FROM items"); got != 5 {
				t.Errorf("the slice holds %d rows after the refusals; want 5", got)
			}
			if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
				t.Fatalf("destroy by the owner: %v", err)
			}
			if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", s); got != 0 {
				t.Errorf("the owner's destroy left the database")
			}
			// Gone is gone for everybody: destroy stays idempotent.
			if _, err := b.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: theirs}); err != nil {
				t.Errorf("destroy of a slice that is gone, by another home: %v", err)
			}
		})
	}
}

// TestClaimAdoptsUnclaimed: a database made by hand (with a comment that
// is not a claim) or by an older host is adopted by the first owner that
// provisions it, keeping its data, and then refused to another.
func TestClaimAdoptsUnclaimed(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	ac := adminConn(t, admin)
	s := testSlice(t, "adopt")
	cleanupSlice(t, a, admin, s)
	exec1(t, ac, "CREATE DATABASE "+ident(s))
	exec1(t, ac, "COMMENT ON DATABASE "+ident(s)+" IS 'made by hand'")
	seed(t, resolveT(t, a, admin, s, nil).Address, 2)

	mine := owned(admin, s, "a", nil)
	// Resolve checks but does not adopt.
	if _, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
		t.Fatalf("resolve of an unclaimed slice: %v", err)
	}
	if got := comment(t, ac, s); got != "made by hand" {
		t.Errorf("resolve changed the comment to %q", got)
	}
	res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: mine})
	if err != nil {
		t.Fatalf("adopt: %v", err)
	}
	if res.Existed == nil || !*res.Existed {
		t.Errorf("adopt: existed %v; want true", res.Existed)
	}
	if got := comment(t, ac, s); got != mine.Claim() {
		t.Errorf("comment %q after adoption; want %q", got, mine.Claim())
	}
	if got := count(t, connect(t, resolveT(t, a, admin, s, nil).Address), "SELECT count(*) FROM items"); got != 2 {
		t.Errorf("the adopted slice holds %d rows; want 2", got)
	}
	_, err = a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "b", nil)})
	wantConflict(t, "provision by another home after adoption", err)
}

// TestCloneClaims: the clone carries the cloning owner's claim, not the
// source's comment; another home may neither clone an owner's slice nor
// clone into one, and a refused clone leaves the target whole.
func TestCloneClaims(t *testing.T) {
	admin := testAdminURL(t)
	for _, cfg := range []map[string]any{nil, ownerRole} {
		t.Run(fmt.Sprintf("owner_role=%v", cfg != nil), func(t *testing.T) {
			a := New()
			ac := adminConn(t, admin)
			src, dst, theirSrc := testSlice(t, "golden"), testSlice(t, "clone"), testSlice(t, "theirs")
			for _, s := range []string{src, dst, theirSrc} {
				cleanupSlice(t, a, admin, s)
			}
			golden := owned(admin, src, "a", cfg)
			golden.OwnerLabel = "the golden's label"
			if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: golden}); err != nil {
				t.Fatalf("provision the source: %v", err)
			}
			r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: golden})
			if err != nil {
				t.Fatal(err)
			}
			seed(t, r.Address, 3)

			mine := owned(admin, dst, "a", cfg)
			if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: mine, Source: src}); err != nil {
				t.Fatalf("clone: %v", err)
			}
			if got := comment(t, ac, dst); got != mine.Claim() || got == golden.Claim() {
				t.Errorf("the clone's comment %q; want its own claim %q (the source's is %q)", got, mine.Claim(), golden.Claim())
			}
			if got := comment(t, ac, src); got != golden.Claim() {
				t.Errorf("the source's comment became %q; want %q", got, golden.Claim())
			}

			// Another home reading the golden by cloning it.
			b := New()
			into := owned(admin, theirSrc, "b", cfg)
			_, err = b.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: into, Source: src})
			wantConflict(t, "clone of another home's slice", err)
			if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", theirSrc); got != 0 {
				t.Errorf("a refused clone made the database %s", theirSrc)
			}
			if got := count(t, ac, "SELECT count(*) FROM pg_roles WHERE rolname = $1", theirSrc); got != 0 {
				t.Errorf("a refused clone made the role %s", theirSrc)
			}
			// Another home replacing the owner's slice by cloning into it.
			if _, err := b.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: into}); err != nil {
				t.Fatalf("provision another home's source: %v", err)
			}
			over := owned(admin, dst, "b", cfg)
			_, err = b.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: over, Source: theirSrc})
			wantConflict(t, "clone into another home's slice", err)
			if got := comment(t, ac, dst); got != mine.Claim() {
				t.Errorf("the clone's comment %q after a refused clone into it; want %q", got, mine.Claim())
			}
			if got := count(t, connect(t, resolveT(t, a, admin, dst, cfg).Address), "SELECT count(*) FROM items"); got != 3 {
				t.Errorf("the clone holds %d rows after a refused clone into it; want 3", got)
			}

			// An older host's clone records nothing, and copies nothing.
			legacy := target(admin, dst, cfg)
			if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: legacy, Source: src}); err != nil {
				t.Fatalf("clone without an owner: %v", err)
			}
			if got := comment(t, ac, dst); got != "" {
				t.Errorf("a clone made without an owner has the comment %q; want none (TEMPLATE copies no comment)", got)
			}
		})
	}
}

// TestClaimRace: two homes provisioning one new slice at once; exactly
// one gets it, the other is refused, whatever the order.
func TestClaimRace(t *testing.T) {
	admin := testAdminURL(t)
	ac := adminConn(t, admin)
	for round := range 4 {
		s := testSlice(t, fmt.Sprintf("race%d", round))
		cleanupSlice(t, nil, admin, s)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, who := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, who, nil)})
			}()
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case sdk.CodeOf(err) != sdk.CodeConflict:
				t.Errorf("round %d, home %d: %v; want success or conflict", round, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d homes got the slice; want exactly 1 (%v)", round, won, errs)
		}
		got := comment(t, ac, s)
		if got != owned(admin, s, "a", nil).Claim() && got != owned(admin, s, "b", nil).Claim() {
			t.Errorf("round %d: comment %q; want one home's claim", round, got)
		}
	}
}
