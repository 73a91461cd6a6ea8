package postgresadapter

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

func TestIsTestDatabase(t *testing.T) {
	const db = "shop_feat"
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"test_shop_feat", true},      // Django
		{"test_shop_feat_1", true},    // Django --parallel
		{"shop_feat_test", true},      // Rails
		{"shop_feat_test-0", true},    // Rails parallel
		{"shop_feat_test_8f3a", true}, // a Go suite's random suffix
		{"shop_feat", false},          // the slice itself
		{"test_shop_feature", false},  // Django's of slice shop_feature
		{"shop_feature_test", false},  // Rails' of slice shop_feature
		{"shop_feat_testing", false},
		{"shop_feat_x", false},
		{"xtest_shop_feat", false},
	} {
		if got := isTestDatabase(db, tc.name); got != tc.want {
			t.Errorf("isTestDatabase(%q, %q) = %v; want %v", db, tc.name, got, tc.want)
		}
	}
}

// roleConn connects as the slice's role (the resolved address) to the
// database named, as a test runner does to create its databases.
func roleConn(t *testing.T, addr, db string) *pgx.Conn {
	t.Helper()
	return connect(t, withPath(addr, "/"+db))
}

func databasesNamed(t *testing.T, c *pgx.Conn, names ...string) []string {
	t.Helper()
	rows, err := c.Query(t.Context(), "SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY datname", names)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func dropAtEnd(t *testing.T, admin string, dbs ...string) {
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is done by now
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for _, d := range dbs {
			_, _ = c.Exec(ctx, "ALTER DATABASE "+ident(d)+" IS_TEMPLATE false")
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(d)+" WITH (FORCE)")
		}
	})
}

// TestTestDatabasesOwnerRole: with owner_role and test_databases the
// slice's role creates Django's (test_<db>, test_<db>_1 from it as a
// template, as --parallel does), Rails' and a Go suite's test databases,
// and destroy drops them all, one outside the convention too, then the
// role. Without test_databases the role may not create a database.
func TestTestDatabasesOwnerRole(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "tdb")
	db := names.Postgres(s)
	cfg := map[string]any{KeyOwnerRole: true, KeyTestDatabases: true}
	made := []string{"test_" + db, "test_" + db + "_1", db + "_test-0", db + "_test_8f3a", "zz_" + db}
	dropAtEnd(t, admin, made...)
	provisionT(t, a, admin, s, cfg)
	addr := resolveT(t, a, admin, s, cfg).Address
	rc := roleConn(t, addr, "postgres")
	exec1(t, rc, "CREATE DATABASE "+ident(made[0]))
	exec1(t, rc, "CREATE DATABASE "+ident(made[1])+" TEMPLATE "+ident(made[0]))
	for _, d := range made[2:] {
		exec1(t, rc, "CREATE DATABASE "+ident(d))
	}
	ac := adminConn(t, admin)
	if got := databasesNamed(t, ac, made...); len(got) != len(made) {
		t.Fatalf("the slice role made %v; want %v", got, made)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := databasesNamed(t, ac, append(made, db)...); len(got) != 0 {
		t.Errorf("after destroy these remain: %v; want none", got)
	}
	if got := count(t, ac, "SELECT count(*) FROM pg_roles WHERE rolname = $1", db); got != 0 {
		t.Errorf("after destroy the role %q remains", db)
	}
}

// TestTestDatabasesOff: without test_databases the slice's role may not
// create a database, and provisioning again without it takes CREATEDB
// back from a role that had it.
func TestTestDatabasesOff(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "tdboff")
	db := names.Postgres(s)
	dropAtEnd(t, admin, "test_"+db)
	on := map[string]any{KeyOwnerRole: true, KeyTestDatabases: true}
	off := map[string]any{KeyOwnerRole: true}
	provisionT(t, a, admin, s, on)
	provisionT(t, a, admin, s, off)
	rc := roleConn(t, resolveT(t, a, admin, s, off).Address, "postgres")
	_, err := rc.Exec(t.Context(), "CREATE DATABASE "+ident("test_"+db))
	if pgErrCode(err) != codeInsufficientPriv {
		t.Errorf("CREATE DATABASE as the role without test_databases: %v; want permission denied (%s)", err, codeInsufficientPriv)
	}
}

// TestTestDatabasesAdminCredentials: without owner_role (the application
// connects as the admin) destroy drops the databases of the naming
// convention that carry no claim, and leaves a look-alike of another
// slice, a claimed database and a template alone.
func TestTestDatabasesAdminCredentials(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "tdbadm")
	db := names.Postgres(s)
	cfg := map[string]any{KeyTestDatabases: true}
	gone := []string{"test_" + db, db + "_test_8f3a"}
	kept := []string{"test_" + db + "x", db + "_test_claimed", db + "_test_tpl"}
	dropAtEnd(t, admin, append(gone, kept...)...)
	provisionT(t, a, admin, s, cfg)
	ac := adminConn(t, admin)
	for _, d := range append(gone, kept...) {
		exec1(t, ac, "CREATE DATABASE "+ident(d))
	}
	exec1(t, ac, "COMMENT ON DATABASE "+ident(kept[1])+" IS 'binky:someone else'")
	exec1(t, ac, "ALTER DATABASE "+ident(kept[2])+" IS_TEMPLATE true")
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := databasesNamed(t, ac, gone...); len(got) != 0 {
		t.Errorf("after destroy these test databases remain: %v; want none", got)
	}
	if got := databasesNamed(t, ac, kept...); len(got) != len(kept) {
		t.Errorf("after destroy these remain: %v; want all of %v", got, kept)
	}
}

// TestTestDatabasesNoSquatting: a slice role with test_databases may
// create a database of any free name, another slice's too; provisioning
// that slice refuses to adopt it (code conflict) rather than hand one
// world what another wrote.
func TestTestDatabasesNoSquatting(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s, victim := testSlice(t, "sq"), testSlice(t, "victim")
	cfg := map[string]any{KeyOwnerRole: true, KeyTestDatabases: true}
	dropAtEnd(t, admin, names.Postgres(victim))
	provisionT(t, a, admin, s, cfg)
	rc := roleConn(t, resolveT(t, a, admin, s, cfg).Address, "postgres")
	exec1(t, rc, "CREATE DATABASE "+ident(names.Postgres(victim)))
	cleanupSlice(t, a, admin, victim)
	_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, victim, cfg)})
	if got := sdk.CodeOf(err); got != sdk.CodeConflict {
		t.Errorf("provision over a database another slice's role made: code %q (%v); want %q", got, err, sdk.CodeConflict)
	}
}
