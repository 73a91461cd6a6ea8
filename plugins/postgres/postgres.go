package postgresadapter

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-postgres.
const Name = "postgres"

// Postgres is the adapter. It is long-lived in the RPC tier: it keeps one
// connection pool per admin URL across calls.
type Postgres struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
	// fullWait, when set, is told of each wait for a full server
	// (whileFull) before it starts; tests use it.
	fullWait func(error)
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Postgres { return &Postgres{servers: map[string]*server{}} }

// Describe says who the adapter is: postgres (alias postgresql), able to
// clone, recording each slice's owner (claim.go).
func (*Postgres) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"postgresql"}, Clone: true, Claims: true}, nil
}

// slice is one call's target, checked: its server, config and database.
type slice struct {
	srv *server
	cfg config
	// db is the database and, with owner_role, the role of the slice.
	db string
}

func (p *Postgres) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	srv, err := p.server(t.AdminURL)
	if err != nil {
		return nil, err
	}
	return &slice{srv: srv, cfg: cfg, db: names.Postgres(t.Slice)}, nil
}

// checkSlice refuses a name that is not a slice name (names.IsSlice)
// rather than trusting it: binky only ever sends those.
func checkSlice(what, s string) error {
	if !names.IsSlice(s) {
		return sdk.Errorf(sdk.CodeInvalid, "%s %q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", what, s)
	}
	return nil
}

// Provision creates the slice's database, claimed by the request's owner,
// and with owner_role its role, which then owns the database alone. What
// exists already is kept: a database another home claimed is refused with
// code conflict and left alone, an unclaimed one is adopted.
func (p *Postgres) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision postgres slice %q", req.Slice)
	s, err := p.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var existed bool
	err = p.whileFull(ctx, s.srv, func() (err error) {
		existed, err = p.provision(ctx, s, &req.Target)
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return sdk.Provisioned(existed), nil
}

// provision makes the slice's database exist and carry t's claim, then
// its owner role, and reports whether the database was there already. The
// claim is settled first, under the slice's lock, so a refused call
// touches neither the database nor the role.
func (p *Postgres) provision(ctx context.Context, s *slice, t *sdk.Target) (bool, error) {
	if s.cfg.ownerRole {
		// Settle the secret the role's password derives from before
		// anything is made, so that ensureRole below seldom fails.
		if _, _, err := p.credentials(ctx, s.srv, t.Slice); err != nil {
			return false, err
		}
	}
	conn, err := lockSlice(ctx, s.srv.pool, s.db)
	if err != nil {
		return false, err
	}
	existed, err := claimSlice(ctx, conn, s, t)
	unlockSlice(ctx, conn, s.db)
	if err != nil {
		return false, err
	}
	if !s.cfg.ownerRole {
		return existed, nil
	}
	if err := p.ensureRole(ctx, s.srv, s.db, t.Slice, s.cfg.testDatabases); err != nil {
		return false, err
	}
	return existed, fence(ctx, s.srv.pool, s.db, s.db)
}

// claimSlice, holding the slice's lock on q, refuses a database another
// home claimed, adopts an unclaimed one, or creates the database and
// records t's claim on it; a database it made but could not claim is dropped
// again. It reports whether the database existed. With owner_role, a role
// of the slice's name that binky did not make is refused here, before
// anything is made.
func claimSlice(ctx context.Context, q querier, s *slice, t *sdk.Target) (bool, error) {
	exists, comment, err := dbClaim(ctx, q, s.db)
	if err != nil {
		return false, err
	}
	if exists {
		if err := checkMaker(ctx, q, s.db); err != nil {
			return true, err
		}
		return true, keepClaim(ctx, q, s, t, comment)
	}
	if s.cfg.ownerRole {
		if err := checkRole(ctx, q, s.db); err != nil {
			return false, err
		}
	}
	_, err = q.Exec(ctx, "CREATE DATABASE "+ident(s.db))
	switch {
	case pgCode(err) == codeDuplicateDatabase:
		// Made meanwhile by a caller that does not take the lock (an
		// adapter that predates claims, or a person): it existed.
		if _, comment, err = dbClaim(ctx, q, s.db); err != nil {
			return true, err
		}
		return true, keepClaim(ctx, q, s, t, comment)
	case err != nil:
		return false, fmt.Errorf("create database %q: %w", s.db, err)
	}
	claim := t.Claim()
	if claim == "" {
		return false, nil
	}
	if err := recordClaim(ctx, q, s.db, claim); err != nil {
		if _, derr := q.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+ident(s.db)); derr != nil {
			return false, fmt.Errorf("%w (and dropping the unclaimed new database failed: %v)", err, derr)
		}
		return false, err
	}
	return false, nil
}

// fence makes role the owner of db and the only non-superuser who may
// connect to it.
func fence(ctx context.Context, q querier, db, role string) error {
	var cur string
	if err := q.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", db).Scan(&cur); err != nil {
		return fmt.Errorf("look up the owner of database %q: %w", db, err)
	}
	if cur != role {
		if _, err := q.Exec(ctx, "ALTER DATABASE "+ident(db)+" OWNER TO "+ident(role)); err != nil {
			return fmt.Errorf("make role %q the owner of database %q: %w", role, db, err)
		}
	}
	if _, err := q.Exec(ctx, "REVOKE CONNECT, TEMPORARY ON DATABASE "+ident(db)+" FROM PUBLIC"); err != nil {
		return fmt.Errorf("revoke CONNECT on database %q from PUBLIC: %w", db, err)
	}
	return nil
}

// Resolve answers the admin URL with the database replaced, and the
// values user, password (secret), host, port and database. With owner_role the URL holds the slice role's
// credentials instead, and the role's password is set (to the same
// derived value) on the way, so a secret that was lost heals here. A
// database another home claimed is refused with code conflict before the
// role is touched.
func (p *Postgres) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve postgres slice %q", req.Slice)
	s, err := p.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var res *sdk.ResolveResponse
	err = p.whileFull(ctx, s.srv, func() (err error) {
		res, err = p.resolve(ctx, s, &req.Target)
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return res, nil
}

func (p *Postgres) resolve(ctx context.Context, s *slice, t *sdk.Target) (*sdk.ResolveResponse, error) {
	if err := checkClaim(ctx, s.srv.pool, s, t); err != nil {
		return nil, err
	}
	if !s.cfg.ownerRole {
		res := &sdk.ResolveResponse{Address: sliceURL(s.srv.url, s.db, nil)}
		setConnValues(res, s.srv, s.db, "", "")
		return res, nil
	}
	pw, err := p.resetPassword(ctx, s.srv, s.db, t.Slice)
	if err != nil {
		return nil, err
	}
	res := &sdk.ResolveResponse{Address: sliceURL(s.srv.url, s.db, url.UserPassword(s.db, pw))}
	setConnValues(res, s.srv, s.db, s.db, pw)
	return res, nil
}

// Destroy drops the slice's database, its test databases (testdb.go),
// then its role if binky made it. A
// slice already gone is fine; one another home claimed is refused with
// code conflict and left whole, role included.
func (p *Postgres) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy postgres slice %q", req.Slice)
	s, err := p.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := p.whileFull(ctx, s.srv, func() error { return p.destroy(ctx, s, &req.Target) }); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.DestroyResponse{}, nil
}

func (p *Postgres) destroy(ctx context.Context, s *slice, t *sdk.Target) error {
	v, err := p.serverVersion(ctx, s.srv)
	if err != nil {
		return err
	}
	conn, err := lockSlice(ctx, s.srv.pool, s.db)
	if err != nil {
		return err
	}
	defer unlockSlice(ctx, conn, s.db)
	if err := checkClaim(ctx, conn, s, t); err != nil {
		return err
	}
	if err := dropDatabase(ctx, conn, v, s.db); err != nil {
		return err
	}
	if err := dropTestDatabases(ctx, conn, v, s.db, s.cfg.testDatabases); err != nil {
		return err
	}
	return dropRole(ctx, conn, s.db)
}

// dropDatabase drops db over q: WITH (FORCE) on 13+ (version is
// server_version_num), else by terminating its connections and retrying
// while one reconnects.
func dropDatabase(ctx context.Context, q querier, version int, db string) error {
	if version >= 130000 {
		if _, err := q.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(db)+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %q: %w", db, err)
		}
		return nil
	}
	return retryInUse(ctx, func() error {
		if err := terminate(ctx, q, db); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(db)); err != nil {
			return fmt.Errorf("drop database %q: %w", db, err)
		}
		return nil
	})
}

// terminate ends every other session connected to db.
func terminate(ctx context.Context, q querier, db string) error {
	_, err := q.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db)
	if err != nil {
		return fmt.Errorf("terminate the connections to database %q: %w", db, err)
	}
	return nil
}

// inUseAttempts bounds retryInUse.
const inUseAttempts = 6

// retryInUse runs f until it does not fail with "database is being
// accessed by other users", backing off a little more each time.
func retryInUse(ctx context.Context, f func() error) error {
	var err error
	for i := range inUseAttempts {
		if err = f(); pgCode(err) != codeObjectInUse {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i+1) * 100 * time.Millisecond):
		}
	}
	return sdk.Errorf(sdk.CodeConflict, "%v (still in use after %d attempts to close its connections)", err, inUseAttempts)
}

// Close closes every pool the adapter opened. sdk.Run does not call it
// today; the process exiting closes the connections as well.
func (p *Postgres) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range p.servers {
		s.pool.Close()
		delete(p.servers, k)
	}
	return nil
}

var _ sdk.Adapter = (*Postgres)(nil)
