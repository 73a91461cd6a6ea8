package postgresadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// defaultAdminURL is the server every test machine runs; override with
// BINKY_TEST_POSTGRES_URL.
const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres"

func testAdminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_POSTGRES_URL")
	if u == "" {
		u = defaultAdminURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	c, err := connectWaiting(ctx, u)
	if err != nil {
		msg := "PostgreSQL is not reachable at " + defaultAdminURL + " (or BINKY_TEST_POSTGRES_URL): " + err.Error() +
			"; start it: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
		adaptertest.MissingServer(t, msg)
	}
	_ = c.Close(ctx)
	return u
}

// adminConn is a plain connection to the admin database for a test's own
// checks, closed at the end of the test.
func adminConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	return connect(t, url)
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound for a server that stays full
	defer cancel()
	c, err := connectWaiting(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// connectWaiting connects to url, waiting while the server is full
// (SQLSTATE 53300: a shared server at max_connections, say while another
// module's tests run beside these) until ctx ends, so a busy server slows
// the tests down rather than failing them.
func connectWaiting(ctx context.Context, url string) (*pgx.Conn, error) {
	wait := 100 * time.Millisecond
	for {
		c, err := pgx.Connect(ctx, url)
		if pgErrCode(err) != codeTooManyConns {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// testSlice is a fresh slice name: bt_<8 hex>_<suffix>.
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

// provisionT provisions a slice and destroys it (database and role) when
// the test ends.
func provisionT(t *testing.T, a *Postgres, admin, slice string, cfg map[string]any) {
	t.Helper()
	cleanupSlice(t, a, admin, slice)
	if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, cfg)}); err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
}

// cleanupSlice destroys a slice when the test ends, with a fresh adapter
// so a broken one under test cannot leak it.
func cleanupSlice(t *testing.T, _ *Postgres, admin, slice string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, nil)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func resolveT(t *testing.T, a *Postgres, admin, slice string, cfg map[string]any) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

func exec1(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, c *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := c.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// adapterBinary is binky-adapter-postgres, built or found by the kit.
func adapterBinary(t *testing.T) string {
	t.Helper()
	return adaptertest.Binary(t, "binky-adapter-postgres")
}

// TestMain removes the secret schema in the admin database when this run
// made it and no slice role is left whose password derives from it: a run
// beside this one (another module's, another session's) may still be
// using it, and a new key under its roles would change their passwords
// between two resolves.
func TestMain(m *testing.M) {
	hadSchema := schemaExists()
	code := m.Run()
	if hadSchema == 0 && schemaExists() == 1 && sliceRoles() == 0 {
		dropSchema()
	}
	os.Exit(code)
}

// sliceRoles counts the roles binky made on the server (roleComment), -1
// when the server cannot say.
func sliceRoles() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	c, err := pgx.Connect(ctx, adminFromEnv())
	if err != nil {
		return -1
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE shobj_description(oid, 'pg_authid') = $1", roleComment).Scan(&n); err != nil {
		return -1
	}
	return n
}

func adminFromEnv() string {
	if u := os.Getenv("BINKY_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return defaultAdminURL
}

// schemaExists is 1 when the admin database has the binky schema, 0 when
// not, -1 when the server cannot say.
func schemaExists() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	c, err := pgx.Connect(ctx, adminFromEnv())
	if err != nil {
		return -1
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = 'binky'").Scan(&n); err != nil {
		return -1
	}
	return n
}

func dropSchema() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	c, err := pgx.Connect(ctx, adminFromEnv())
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS binky CASCADE")
}
