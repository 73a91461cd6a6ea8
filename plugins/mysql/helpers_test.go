package mysqladapter

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// defaultAdminURL is the server every test machine runs (MariaDB standing
// in for MySQL and Percona); override with BINKY_TEST_MYSQL_URL.
const defaultAdminURL = "mysql://root@127.0.0.1:3306/"

func adminFromEnv() string {
	if u := os.Getenv("BINKY_TEST_MYSQL_URL"); u != "" {
		return u
	}
	return defaultAdminURL
}

func testAdminURL(t *testing.T) string {
	t.Helper()
	u := adminFromEnv()
	a, err := parseAdmin(u)
	if err != nil {
		t.Fatalf("BINKY_TEST_MYSQL_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	conn, err := mysql.NewConnector(a.cfg)
	if err == nil {
		db := sql.OpenDB(conn)
		err = pingWaiting(ctx, db)
		db.Close()
	}
	if err != nil {
		msg := "MySQL/MariaDB is not reachable at " + u + ": " + err.Error() +
			"; start it (service mariadb start, or mariadbd --no-defaults --datadir=D --user=root --bind-address=127.0.0.1 --port=3306)"
		adaptertest.MissingServer(t, msg)
	}
	return u
}

// pingWaiting pings db, waiting while the server is full (error 1040: a
// shared server at max_connections, say while another module's tests run
// beside these) until ctx ends, so a busy server slows the tests down
// rather than failing them.
func pingWaiting(ctx context.Context, db *sql.DB) error {
	wait := 100 * time.Millisecond
	for {
		err := db.PingContext(ctx)
		if !serverFull(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// openDSN opens a pool on a DSN, closed when the test ends; it holds two
// connections at most, so the tests bound what they take from a shared
// server.
func openDSN(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db
}

// adminDB is a pool on the admin connection for a test's own checks.
func adminDB(t *testing.T, admin string) *sql.DB {
	t.Helper()
	a, err := parseAdmin(admin)
	if err != nil {
		t.Fatal(err)
	}
	return openDSN(t, a.cfg.FormatDSN())
}

func testSlice(t testing.TB, suffix string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func target(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

// cleanupSlice drops a slice when the test ends, with a fresh adapter.
func cleanupSlice(t *testing.T, admin, slice string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, nil)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func provisionT(t *testing.T, a *MySQL, admin, slice string, cfg map[string]any) {
	t.Helper()
	cleanupSlice(t, admin, slice)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, cfg)}); err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
}

func resolveT(t *testing.T, a *MySQL, admin, slice string) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, nil)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

// sliceDB opens the slice's resolved DSN.
func sliceDB(t *testing.T, a *MySQL, admin, slice string) *sql.DB {
	t.Helper()
	return openDSN(t, resolveT(t, a, admin, slice).Values["dsn"])
}

func exec1(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, stmt string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func count(t *testing.T, db *sql.DB, stmt string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), stmt, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return n
}

// adapterBinary is binky-adapter-mysql, built or found by the kit.
func adapterBinary(t *testing.T) string {
	t.Helper()
	return adaptertest.Binary(t, "binky-adapter-mysql")
}

// TestMain drops the binky database (the owner_user secret) when this
// run made it and no slice user is left whose password derives from it: a
// run beside this one (another module's, another session's) may still be
// using it, and a new key under its users would change their passwords
// between two resolves.
func TestMain(m *testing.M) {
	had := secretDatabase()
	code := m.Run()
	if had == 0 && secretDatabase() == 1 && sliceUsers() == 0 {
		if db := openAdmin(); db != nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS binky")
			db.Close()
		}
	}
	os.Exit(code)
}

// openAdmin is a pool on the admin connection, or nil.
func openAdmin() *sql.DB {
	a, err := parseAdmin(adminFromEnv())
	if err != nil {
		return nil
	}
	db, err := sql.Open("mysql", a.cfg.FormatDSN())
	if err != nil {
		return nil
	}
	return db
}

// sliceUsers counts the slice users on the server (userName's shape), -1
// when it cannot say.
func sliceUsers() int {
	return adminCount("SELECT COUNT(*) FROM mysql.user WHERE User REGEXP '^binky_[0-9a-f]{16}$'")
}

// secretDatabase is 1 when the server has the binky database, 0 when
// not, -1 when it cannot say.
func secretDatabase() int {
	return adminCount("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'binky'")
}

// adminCount is the count query gives as the admin, -1 when it cannot say.
func adminCount(query string) int {
	db := openAdmin()
	if db == nil {
		return -1
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return -1
	}
	return n
}
