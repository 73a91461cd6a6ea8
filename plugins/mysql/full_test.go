package mysqladapter

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// limitedAdmin makes a user with every privilege and MAX_USER_CONNECTIONS
// 1, dropped when the test ends, and returns its admin URL.
func limitedAdmin(t *testing.T, admin, user string) string {
	t.Helper()
	if !strings.HasPrefix(admin, "mysql://root@") {
		t.Skip("needs an admin URL of the form mysql://root@… (no password)")
	}
	ad := adminDB(t, admin)
	exec1(t, ad, "CREATE USER '"+user+"'@'%' WITH MAX_USER_CONNECTIONS 1")
	t.Cleanup(func() { _, _ = ad.ExecContext(context.Background(), "DROP USER IF EXISTS '"+user+"'@'%'") })
	exec1(t, ad, "GRANT ALL PRIVILEGES ON *.* TO '"+user+"'@'%'")
	return strings.Replace(admin, "root@", user+"@", 1)
}

// TestWaitsForAFullServer: a verb that meets "too many connections"
// waits and runs again instead of failing. The admin is a user with
// MAX_USER_CONNECTIONS 1 whose one connection the test holds until the
// adapter says it waits.
func TestWaitsForAFullServer(t *testing.T) {
	admin := testAdminURL(t)
	s := testSlice(t, "full")
	limited := limitedAdmin(t, admin, s)
	cleanupSlice(t, admin, s)
	a0, _ := parseAdmin(limited)
	held, err := sql.Open("mysql", a0.cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	hc, err := held.Conn(t.Context())
	if err != nil {
		t.Fatalf("connect as %s: %v", s, err)
	}
	if c, err := held.Conn(t.Context()); !serverFull(err) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a second connection as %s: %v; want the user's connection limit", s, err)
	}

	a := New()
	defer a.Close()
	var once sync.Once
	waits := 0
	a.fullWait = func(error) {
		waits++
		once.Do(func() { _ = hc.Close(); _ = held.Close() })
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(limited, s, nil)}); err != nil {
		t.Fatalf("provision on a full server: %v; want it to wait for the held connection", err)
	}
	if waits == 0 {
		t.Errorf("provision never waited; the server was full when it started")
	}
	if n := count(t, adminDB(t, admin), "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", names.MySQL(s)); n != 1 {
		t.Errorf("%d databases named %s; want 1", n, s)
	}
}

// TestFullWaitIsBounded: a server that stays full fails the verb with
// code unreachable when the call's deadline comes.
func TestFullWaitIsBounded(t *testing.T) {
	admin := testAdminURL(t)
	s := testSlice(t, "fullb")
	limited := limitedAdmin(t, admin, s)
	a0, _ := parseAdmin(limited)
	held := openDSN(t, a0.cfg.FormatDSN())
	hc, err := held.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	a := New()
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(limited, s, nil)})
	if got := sdk.CodeOf(err); got != sdk.CodeUnreachable {
		t.Errorf("provision on a server that stays full: code %q (%v); want %q", got, err, sdk.CodeUnreachable)
	}
}
