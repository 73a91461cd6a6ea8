package postgresadapter

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/names"
)

// TestConformance runs the sdk's conformance suite against the built
// binary and the real server, with and without owner roles.
func TestConformance(t *testing.T) {
	admin := testAdminURL(t)
	bin := adapterBinary(t)
	for _, tc := range []struct {
		name string
		cfg  map[string]any
	}{
		{"admin_credentials", nil},
		{"owner_role", map[string]any{KeyOwnerRole: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, AdminURL: admin, Config: tc.cfg})
		})
	}
	// The alias answers too.
	t.Run("alias_postgresql", func(t *testing.T) {
		adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: "postgresql", AdminURL: admin})
	})
}

// TestSlicesAreIsolated: a row written in one slice is invisible in the
// other, and the resolved addresses name different databases.
func TestSlicesAreIsolated(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	one, two := testSlice(t, "one"), testSlice(t, "two")
	provisionT(t, a, admin, one, nil)
	provisionT(t, a, admin, two, nil)
	r1, r2 := resolveT(t, a, admin, one, nil), resolveT(t, a, admin, two, nil)
	if r1.Address == r2.Address {
		t.Fatalf("both slices resolve to %s; want different addresses", r1.Address)
	}
	if got, want := r1.Values["database"], names.Postgres(one); got != want {
		t.Errorf("values.database = %q; want %q", got, want)
	}
	c1, c2 := connect(t, r1.Address), connect(t, r2.Address)
	for _, c := range []*pgx.Conn{c1, c2} {
		exec1(t, c, "CREATE TABLE items (id int PRIMARY KEY, name text)")
	}
	exec1(t, c1, "INSERT INTO items VALUES (1, 'only in one')")
	if got := count(t, c1, "SELECT count(*) FROM items"); got != 1 {
		t.Errorf("slice one sees %d rows; want 1", got)
	}
	if got := count(t, c2, "SELECT count(*) FROM items"); got != 0 {
		t.Errorf("slice two sees %d rows; want 0 (the row was written in slice one)", got)
	}
}

// TestProvisionDestroyIdempotent: twice each is fine, and destroy really
// removes the database even while a client is connected to it.
func TestProvisionDestroyIdempotent(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "idem")
	provisionT(t, a, admin, s, nil)
	provisionT(t, a, admin, s, nil)
	ac := adminConn(t, admin)
	if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", s); got != 1 {
		t.Fatalf("after provision: %d databases named %s; want 1", got, s)
	}
	held := connect(t, resolveT(t, a, admin, s, nil).Address)
	_ = held // stays connected: destroy must still drop the database
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", s); got != 0 {
		t.Errorf("after destroy: %d databases named %s; want 0", got, s)
	}
}

// TestOddBranchNames: branches with odd characters map, through the
// worktree and slice names, onto databases the server accepts, and are
// dropped again.
func TestOddBranchNames(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	ac := adminConn(t, admin)
	for _, branch := range []string{
		"Feat/ÄÖ..//x",
		"../../etc/passwd",
		`"; DROP DATABASE postgres; --`,
		"x" + strings.Repeat("ß/", 150),
		"golden-main",
		"UPPER lower\ttab\x00nul",
	} {
		wt := names.Worktree(branch)
		s := names.Slice("bt"+randomHex(t), wt)
		if !names.IsSlice(s) {
			t.Fatalf("names.Slice for branch %q = %q; not a slice name", branch, s)
		}
		provisionT(t, a, admin, s, map[string]any{KeyOwnerRole: true})
		db := names.Postgres(s)
		if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", db); got != 1 {
			t.Errorf("branch %q: %d databases named %q; want 1", branch, got, db)
		}
		c := connect(t, resolveT(t, a, admin, s, map[string]any{KeyOwnerRole: true}).Address)
		var cur string
		if err := c.QueryRow(t.Context(), "SELECT current_database()").Scan(&cur); err != nil || cur != db {
			t.Errorf("branch %q: connected to %q (%v); want %q", branch, cur, err, db)
		}
	}
}

func randomHex(t *testing.T) string {
	return strings.TrimPrefix(strings.TrimSuffix(testSlice(t, "x"), "_x"), "bt_")
}

// TestErrorCodes: the codes a host acts on, against real failures, and
// the admin password never in a message.
func TestErrorCodes(t *testing.T) {
	admin := testAdminURL(t)
	const secret = "s3cr3t-Pa55"
	for _, tc := range []struct {
		name  string
		admin string
		cfg   map[string]any
		want  sdk.Code
	}{
		{"nothing_listens", "postgres://postgres:" + secret + "@127.0.0.1:1/postgres", nil, sdk.CodeUnreachable},
		{"unknown_host", "postgres://postgres:" + secret + "@no-such-host.invalid:5432/postgres", nil, sdk.CodeUnreachable},
		{"unknown_role", strings.Replace(admin, "postgres@", "binky_no_such_role:"+secret+"@", 1), nil, sdk.CodeAuth},
		{"no_admin_url", "", nil, sdk.CodeInvalid},
		{"wrong_scheme", "mysql://root:" + secret + "@127.0.0.1:3306/", nil, sdk.CodeInvalid},
		{"not_a_url", "postgres://u:" + secret + "@[::1", nil, sdk.CodeInvalid},
		{"unknown_config_key", admin, map[string]any{"owner_rol": true}, sdk.CodeInvalid},
		{"config_wrong_type", admin, map[string]any{KeyOwnerRole: "yes"}, sdk.CodeInvalid},
		{"unknown_admin_database", withPath(admin, "/binky_no_such_db"), nil, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "unknown_role" && !strings.Contains(admin, "postgres@") {
				t.Skip("needs an admin URL of the form postgres://postgres@…")
			}
			_, err := New().Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(tc.admin, "bt_never_made", tc.cfg)})
			if err == nil {
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the admin password: %v", err)
			}
		})
	}
}

// TestCloneReplacesAndMissingSource: cloning from a source that does not
// exist is invalid; cloning onto an existing slice replaces it.
func TestCloneMissingSource(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	dst := testSlice(t, "dst")
	cleanupSlice(t, a, admin, dst)
	_, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: testSlice(t, "nosrc")})
	if got := sdk.CodeOf(err); got != sdk.CodeInvalid {
		t.Errorf("clone from a missing source: code %q; want %q (%v)", got, sdk.CodeInvalid, err)
	}
	_, err = a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, nil), Source: dst})
	if got := sdk.CodeOf(err); got != sdk.CodeInvalid {
		t.Errorf("clone onto itself: code %q; want %q (%v)", got, sdk.CodeInvalid, err)
	}
}

func withPath(raw, path string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = path
	return u.String()
}

func pgErrCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
