package mysqladapter

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/names"
)

// TestConformance runs the sdk's conformance suite against the built
// binary and the real server, by URL and by DSN, under each alias.
func TestConformance(t *testing.T) {
	admin := testAdminURL(t)
	bin := adapterBinary(t)
	a, _ := parseAdmin(admin)
	for _, tc := range []struct {
		name, adapter, admin string
		cfg                  map[string]any
	}{
		{"mysql_url", "", admin, nil},
		{"mariadb_dsn", "mariadb", a.cfg.FormatDSN(), nil},
		{"percona", "percona", admin, nil},
		{"owner_user_test_databases", "", admin, map[string]any{KeyOwnerUser: true, KeyTestDatabases: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: tc.adapter, AdminURL: tc.admin, Config: tc.cfg})
		})
	}
}

// TestSlicesAreIsolated: a row written in one slice is invisible in the
// other.
func TestSlicesAreIsolated(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	one, two := testSlice(t, "one"), testSlice(t, "two")
	provisionT(t, a, admin, one, nil)
	provisionT(t, a, admin, two, nil)
	r1, r2 := resolveT(t, a, admin, one), resolveT(t, a, admin, two)
	if r1.Address == r2.Address || r1.Values["dsn"] == r2.Values["dsn"] {
		t.Fatalf("both slices resolve to %s; want different addresses", r1.Address)
	}
	if want := "mysql://root@127.0.0.1:3306/" + one; admin == defaultAdminURL && r1.Address != want {
		t.Errorf("address %q; want %q", r1.Address, want)
	}
	d1, d2 := openDSN(t, r1.Values["dsn"]), openDSN(t, r2.Values["dsn"])
	exec1(t, d1, "CREATE TABLE items (id int PRIMARY KEY, name text)")
	exec1(t, d2, "CREATE TABLE items (id int PRIMARY KEY, name text)")
	exec1(t, d1, "INSERT INTO items VALUES (1, 'only in one')")
	if got := count(t, d1, "SELECT count(*) FROM items"); got != 1 {
		t.Errorf("slice one sees %d rows; want 1", got)
	}
	if got := count(t, d2, "SELECT count(*) FROM items"); got != 0 {
		t.Errorf("slice two sees %d rows; want 0 (the row was written in slice one)", got)
	}
}

// TestProvisionCharset: config charset and collation reach CREATE
// DATABASE.
func TestProvisionCharset(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "cs")
	provisionT(t, a, admin, s, map[string]any{KeyCharset: "latin1", KeyCollation: "latin1_bin"})
	cs, coll, ok, err := schemaOf(t.Context(), adminDB(t, admin), s)
	if err != nil || !ok {
		t.Fatalf("schema %s: ok %v, %v", s, ok, err)
	}
	if cs != "latin1" || coll != "latin1_bin" {
		t.Errorf("charset %s collation %s; want latin1 latin1_bin", cs, coll)
	}
}

// TestDestroy: twice is fine, and the database is gone.
func TestDestroy(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "gone")
	provisionT(t, a, admin, s, nil)
	for i := range 2 {
		if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if _, _, ok, _ := schemaOf(t.Context(), adminDB(t, admin), s); ok {
		t.Errorf("database %s survived destroy", s)
	}
}

// TestOddBranchNames: branches with odd characters map onto databases the
// server accepts.
func TestOddBranchNames(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	adb := adminDB(t, admin)
	for _, branch := range []string{
		"Feat/ÄÖ..//x",
		"../../etc/passwd",
		"`; DROP DATABASE mysql; --",
		"x" + strings.Repeat("ß/", 150),
		"information_schema",
	} {
		s := names.Slice("bt"+strings.TrimPrefix(testSlice(t, "x")[:11], "bt_"), names.Worktree(branch))
		provisionT(t, a, admin, s, nil)
		db := names.MySQL(s)
		if _, _, ok, err := schemaOf(t.Context(), adb, db); !ok || err != nil {
			t.Errorf("branch %q: database %q missing after provision (%v)", branch, db, err)
		}
		var cur string
		if err := sliceDB(t, a, admin, s).QueryRowContext(t.Context(), "SELECT DATABASE()").Scan(&cur); err != nil || cur != db {
			t.Errorf("branch %q: connected to %q (%v); want %q", branch, cur, err, db)
		}
	}
	// The one slice name that spells a system schema still gets its own.
	if got := names.MySQL("information_schema"); got == "information_schema" {
		t.Errorf("names.MySQL(information_schema) = %q; want it changed", got)
	}
}

// TestErrorCodes: real failures map onto the codes a host acts on, and the
// admin password never shows.
func TestErrorCodes(t *testing.T) {
	admin := testAdminURL(t)
	const secret = "s3cr3t-Pa55"
	for _, tc := range []struct {
		name  string
		admin string
		cfg   map[string]any
		want  sdk.Code
	}{
		{"nothing_listens", "mysql://root:" + secret + "@127.0.0.1:1/", nil, sdk.CodeUnreachable},
		{"unknown_host", "mysql://root:" + secret + "@no-such-host.invalid:3306/", nil, sdk.CodeUnreachable},
		{"wrong_password", strings.Replace(admin, "root@", "binky_no_such_user:"+secret+"@", 1), nil, sdk.CodeAuth},
		{"dsn_wrong_password", "binky_no_such_user:" + secret + "@tcp(127.0.0.1:3306)/", nil, sdk.CodeAuth},
		{"no_admin_url", "", nil, sdk.CodeInvalid},
		{"wrong_scheme", "postgres://root:" + secret + "@127.0.0.1/", nil, sdk.CodeInvalid},
		{"bad_dsn", "root:" + secret + "@tcp(127.0.0.1:3306", nil, sdk.CodeInvalid},
		{"bad_url", "mysql://root:" + secret + "@[::1", nil, sdk.CodeInvalid},
		{"unknown_config", admin, map[string]any{"charst": "utf8mb4"}, sdk.CodeInvalid},
		{"charset_injection", admin, map[string]any{KeyCharset: "utf8mb4; DROP DATABASE x"}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "wrong_password" && !strings.Contains(admin, "root@") {
				t.Skip("needs an admin URL of the form mysql://root@…")
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
