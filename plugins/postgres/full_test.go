package postgresadapter

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestWaitsForAFullServer: a verb that meets "too many connections"
// (SQLSTATE 53300) waits and runs again instead of failing. The admin is a
// role with CONNECTION LIMIT 1 whose one connection the test holds until
// the adapter says it waits.
func TestWaitsForAFullServer(t *testing.T) {
	admin := testAdminURL(t)
	if !strings.Contains(admin, "postgres@") {
		t.Skip("needs an admin URL of the form postgres://postgres@… (trust authentication)")
	}
	ac := adminConn(t, admin)
	s := testSlice(t, "full")
	role := s + "_admin"
	exec1(t, ac, "CREATE ROLE "+ident(role)+" LOGIN CREATEDB CONNECTION LIMIT 1")
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+ident(s)+" WITH (FORCE)")
		_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+ident(role))
	})
	limited := strings.Replace(admin, "postgres@", role+"@", 1)
	held := connect(t, limited)
	if _, err := pgx.Connect(t.Context(), limited); pgErrCode(err) != codeTooManyConns {
		t.Fatalf("a second connection as %s: %v; want SQLSTATE %s", role, err, codeTooManyConns)
	}

	a := New()
	var once sync.Once
	waits := 0
	a.fullWait = func(err error) {
		waits++
		once.Do(func() { _ = held.Close(context.Background()) })
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(limited, s, nil)}); err != nil {
		t.Fatalf("provision on a full server: %v; want it to wait for the held connection", err)
	}
	if waits == 0 {
		t.Errorf("provision never waited; the server was full when it started")
	}
	if got := count(t, ac, "SELECT count(*) FROM pg_database WHERE datname = $1", s); got != 1 {
		t.Errorf("%d databases named %s; want 1", got, s)
	}
	a.Close()
}

// TestFullWaitIsBounded: a server that stays full fails the verb with
// code unreachable once the wait is over, or when the call's deadline
// comes first.
func TestFullWaitIsBounded(t *testing.T) {
	admin := testAdminURL(t)
	if !strings.Contains(admin, "postgres@") {
		t.Skip("needs an admin URL of the form postgres://postgres@… (trust authentication)")
	}
	ac := adminConn(t, admin)
	s := testSlice(t, "fullb")
	role := s + "_admin"
	exec1(t, ac, "CREATE ROLE "+ident(role)+" LOGIN CREATEDB CONNECTION LIMIT 0")
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+ident(role))
			_ = c.Close(context.Background())
		}
	})
	limited := strings.Replace(admin, "postgres@", role+"@", 1)
	a := New()
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(limited, s, nil)})
	if got := sdk.CodeOf(err); got != sdk.CodeUnreachable {
		t.Errorf("provision on a server that stays full: code %q (%v); want %q", got, err, sdk.CodeUnreachable)
	}
}

// TestTwoSuitesOnAFullServer: two conformance suites at once, against a
// private server with max_connections = 3, both pass: a call that finds
// the server full waits for the other suite's connections instead of
// failing (issue 40: two suites at once exhausted a shared server). Three,
// not two: a clone holds the admin connection while it opens one to the
// template, so with two slots each suite could hold one and wait for the
// other's; with three, one of them always gets its second and goes on.
func TestTwoSuitesOnAFullServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the private server is started the Unix way")
	}
	admin := privateScramServer(t, "max_connections=3", "superuser_reserved_connections=0", "max_wal_senders=0")
	bin := adapterBinary(t)
	t.Run("group", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			cfg  map[string]any
		}{
			{"admin_credentials", nil},
			{"owner_role", map[string]any{KeyOwnerRole: true, KeyTestDatabases: true}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				adaptertest.Test(t, adaptertest.Options{Binary: bin, AdminURL: admin, Config: tc.cfg})
			})
		}
	})
}
