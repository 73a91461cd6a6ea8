package mysqladapter

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

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
		{"shop_featxtest", false},
		{"xtest_shop_feat", false},
	} {
		if got := isTestDatabase(db, tc.name); got != tc.want {
			t.Errorf("isTestDatabase(%q, %q) = %v; want %v", db, tc.name, got, tc.want)
		}
	}
}

func TestTestPatterns(t *testing.T) {
	got := testPatterns("shop_feat")
	want := []string{
		"`shop\\_feat\\_test`", "`shop\\_feat\\_test\\_%`", "`shop\\_feat\\_test-%`",
		"`test\\_shop\\_feat`", "`test\\_shop\\_feat\\_%`", "`test\\_shop\\_feat-%`",
	}
	if len(got) != len(want) {
		t.Fatalf("testPatterns = %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("testPatterns[%d] = %s; want %s", i, got[i], want[i])
		}
	}
}

// destroyAtEnd destroys a slice with its config when the test ends (the
// kit's cleanup sends none, and would leave the slice user).
func destroyAtEnd(t *testing.T, admin, slice string, cfg map[string]any) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, cfg)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func dropDatabasesAtEnd(t *testing.T, admin string, dbs ...string) {
	t.Cleanup(func() {
		a, err := parseAdmin(admin)
		if err != nil {
			return
		}
		c, err := sql.Open("mysql", a.cfg.FormatDSN())
		if err != nil {
			return
		}
		defer c.Close()
		for _, d := range dbs {
			if q, err := quoteIdent(d); err == nil {
				_, _ = c.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+q)
			}
		}
	})
}

// userServer opens the slice user's resolved DSN with no database
// selected, as Django's and Rails' test runners connect to create theirs.
func userServer(t *testing.T, a *MySQL, admin, slice string, cfg map[string]any) *sql.DB {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	c, err := mysql.ParseDSN(r.Values["dsn"])
	if err != nil {
		t.Fatal(err)
	}
	if c.User != userName(names.MySQL(slice)) {
		t.Fatalf("resolved user %q; want the slice user %q", c.User, userName(names.MySQL(slice)))
	}
	c.DBName = ""
	db := openDSN(t, c.FormatDSN())
	db.SetMaxOpenConns(1)
	return db
}

func databases(t *testing.T, db *sql.DB, names ...string) []string {
	t.Helper()
	var got []string
	for _, n := range names {
		if count(t, db, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", n) == 1 {
			got = append(got, n)
		}
	}
	return got
}

// TestTestDatabasesOwnerUser: with owner_user and test_databases the
// slice's user creates Django's, Rails' and a Go suite's test databases,
// is refused a name outside them and another slice's database, and
// destroy drops them all and the user.
func TestTestDatabasesOwnerUser(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s, other := testSlice(t, "tdb"), testSlice(t, "other")
	db := names.MySQL(s)
	cfg := map[string]any{KeyOwnerUser: true, KeyTestDatabases: true}
	made := []string{"test_" + db, "test_" + db + "_1", db + "_test", db + "_test-0", db + "_test_8f3a"}
	refused := []string{"zz_" + db, "test_" + db + "x", db + "_testing", other}
	dropDatabasesAtEnd(t, admin, append(made, refused...)...)
	destroyAtEnd(t, admin, s, cfg)
	provisionT(t, a, admin, other, nil)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
		t.Fatalf("provision: %v", err)
	}
	u := userServer(t, a, admin, s, cfg)
	for _, d := range made {
		exec1(t, u, "CREATE DATABASE `"+d+"`")
	}
	exec1(t, u, "DROP DATABASE `"+made[1]+"`") // and drop one, as a runner does
	for _, d := range refused[:3] {
		_, err := u.ExecContext(t.Context(), "CREATE DATABASE `"+d+"`")
		if errNumber(err) != erDBAccessDenied {
			t.Errorf("CREATE DATABASE %s as the slice user: %v; want access denied (%d)", d, err, erDBAccessDenied)
		}
	}
	if _, err := u.ExecContext(t.Context(), "CREATE TABLE `"+other+"`.t (id int)"); errNumber(err) == 0 {
		t.Errorf("the slice user wrote into another slice's database %s; want it refused", other)
	}
	ad := adminDB(t, admin)
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := databases(t, ad, append(made, db)...); len(got) != 0 {
		t.Errorf("after destroy these remain: %v; want none", got)
	}
	if got := databases(t, ad, other); len(got) != 1 {
		t.Errorf("destroy dropped the other slice's database %s", other)
	}
	if n := count(t, ad, "SELECT COUNT(*) FROM mysql.user WHERE User = ?", userName(db)); n != 0 {
		t.Errorf("after destroy the slice user %s remains", userName(db))
	}
}

// TestTestDatabasesOff: the slice user of owner_user alone may not create
// a database, and provisioning again without test_databases takes the
// allowance back.
func TestTestDatabasesOff(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "tdboff")
	db := names.MySQL(s)
	on := map[string]any{KeyOwnerUser: true, KeyTestDatabases: true}
	off := map[string]any{KeyOwnerUser: true}
	dropDatabasesAtEnd(t, admin, "test_"+db)
	destroyAtEnd(t, admin, s, off)
	for _, cfg := range []map[string]any{on, off} {
		if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
			t.Fatalf("provision: %v", err)
		}
	}
	u := userServer(t, a, admin, s, off)
	if _, err := u.ExecContext(t.Context(), "CREATE DATABASE `test_"+db+"`"); errNumber(err) != erDBAccessDenied {
		t.Errorf("CREATE DATABASE as the slice user without test_databases: %v; want access denied (%d)", err, erDBAccessDenied)
	}
	// The slice's own database is the user's.
	r := resolveWith(t, a, admin, s, off)
	exec1(t, openDSN(t, r.Values["dsn"]), "CREATE TABLE t (id int)")
}

func resolveWith(t *testing.T, a *MySQL, admin, slice string, cfg map[string]any) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

// TestTestDatabasesAdminCredentials: without owner_user (the application
// connects as the admin) destroy drops the unclaimed databases of the
// naming convention, and leaves a look-alike of another slice and a
// claimed database alone.
func TestTestDatabasesAdminCredentials(t *testing.T) {
	admin := testAdminURL(t)
	a := New()
	s := testSlice(t, "tdbadm")
	db := names.MySQL(s)
	cfg := map[string]any{KeyTestDatabases: true}
	gone := []string{"test_" + db, db + "_test_8f3a"}
	kept := []string{"test_" + db + "x", db + "_test_claimed"}
	dropDatabasesAtEnd(t, admin, append(gone, kept...)...)
	provisionT(t, a, admin, s, cfg)
	ad := adminDB(t, admin)
	for _, d := range append(gone, kept...) {
		exec1(t, ad, "CREATE DATABASE `"+d+"`")
	}
	st, err := a.claimStore(t.Context(), a.servers[admin])
	if err != nil {
		t.Fatal(err)
	}
	if err := recordClaim(t.Context(), ad, st, kept[1], "binky:someone-else"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Destroy(t.Context(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, cfg)}); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if got := databases(t, ad, gone...); len(got) != 0 {
		t.Errorf("after destroy these test databases remain: %v; want none", got)
	}
	if got := databases(t, ad, kept...); len(got) != len(kept) {
		t.Errorf("after destroy these remain: %v; want all of %v", got, kept)
	}
}
