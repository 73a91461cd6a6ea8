package mysqladapter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-mysql.
const Name = "mysql"

// MySQL is the adapter. It is long-lived in the RPC tier: it keeps one
// connection pool per admin URL across calls.
type MySQL struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
	// fullWait, when set, is told of each wait for a full server
	// (whileFull) before it starts; tests use it.
	fullWait func(error)
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *MySQL { return &MySQL{servers: map[string]*server{}} }

// Describe says who the adapter is: mysql (aliases mariadb, percona), able
// to clone, recording each slice's owner (claim.go).
func (*MySQL) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"mariadb", "percona"}, Clone: true, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	srv *server
	cfg config
	db  string // the database name
	q   string // the database name, quoted
}

func (m *MySQL) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	srv, err := m.server(t.AdminURL)
	if err != nil {
		return nil, err
	}
	db := names.MySQL(t.Slice)
	q, err := quoteIdent(db)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalid, "slice database name: %v", err)
	}
	return &slice{srv: srv, cfg: cfg, db: db, q: q}, nil
}

// checkSlice refuses a name that is not a slice name (names.IsSlice)
// rather than trusting it: binky only ever sends those.
func checkSlice(what, s string) error {
	if !names.IsSlice(s) {
		return sdk.Errorf(sdk.CodeInvalid, "%s %q is not a slice name (3 to 63 bytes of [a-z0-9_] holding an '_', starting and ending with a letter or digit)", what, s)
	}
	return nil
}

// Provision creates the slice's database, claimed by the request's owner;
// one that exists is kept: refused with code conflict, untouched, when
// another home claimed it, adopted when nobody did.
func (m *MySQL) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var existed bool
	err = m.whileFull(ctx, s.srv, func() (err error) {
		existed, err = m.provisionSlice(ctx, s, &req.Target)
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return sdk.Provisioned(existed), nil
}

// provisionSlice makes the slice's database exist with t's claim, and
// with owner_user its user; it reports whether the database existed.
func (m *MySQL) provisionSlice(ctx context.Context, s *slice, t *sdk.Target) (bool, error) {
	st, err := m.claimStore(ctx, s.srv)
	if err != nil {
		return false, err
	}
	conn, err := lockSlice(ctx, s.srv.db, s.db)
	if err != nil {
		return false, err
	}
	existed, err := provision(ctx, conn, st, s, t)
	unlockSlice(ctx, conn, s.db)
	if err != nil {
		return false, err
	}
	if s.cfg.ownerUser {
		if _, err := m.ensureUser(ctx, s.srv, s.db, t.Slice, s.cfg.testDatabases); err != nil {
			return false, err
		}
	}
	return existed, nil
}

// provision, holding the slice's lock on q, refuses a database another
// home claimed, adopts an unclaimed one, or creates the database with t's
// claim (in the same CREATE DATABASE where the server has schema
// comments); a database it made but could not claim is dropped again. It
// reports whether the database existed.
func provision(ctx context.Context, q queryer, st claimStore, s *slice, t *sdk.Target) (bool, error) {
	exists, claim, err := readClaim(ctx, q, st, s.db)
	if err != nil {
		return false, err
	}
	if exists {
		return true, keepClaim(ctx, q, st, s, t, claim)
	}
	own := t.Claim()
	stmt := "CREATE DATABASE " + s.q
	if s.cfg.charset != "" {
		stmt += " CHARACTER SET " + s.cfg.charset
	}
	if s.cfg.collation != "" {
		stmt += " COLLATE " + s.cfg.collation
	}
	if st == storeComment && own != "" {
		lit, err := quoteString(own)
		if err != nil {
			return false, err
		}
		stmt += " COMMENT " + lit
	}
	_, err = q.ExecContext(ctx, stmt)
	switch {
	case errNumber(err) == erDBCreateExists:
		// Made meanwhile by a caller that does not take the lock (an
		// adapter that predates claims, or a person): it existed.
		if _, claim, err = readClaim(ctx, q, st, s.db); err != nil {
			return true, err
		}
		return true, keepClaim(ctx, q, st, s, t, claim)
	case err != nil:
		return false, fmt.Errorf("create database %s: %w", s.q, err)
	}
	if st == storeTable && own != "" {
		if err := recordClaim(ctx, q, st, s.db, own); err != nil {
			if _, derr := q.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+s.q); derr != nil {
				return false, fmt.Errorf("%w (and dropping the unclaimed new database failed: %v)", err, derr)
			}
			return false, err
		}
	}
	return false, nil
}

// Resolve answers mysql://user:password@host:port/<database> with the
// admin credentials, or with owner_user the slice user's (whose password
// it sets again, so a lost secret heals), in config.scheme when set, and values "database",
// "dsn" and the connection parts (see resolve). A database another
// home claimed is refused with code conflict.
func (m *MySQL) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	var res *sdk.ResolveResponse
	err = m.whileFull(ctx, s.srv, func() (err error) {
		res, err = m.resolveSlice(ctx, s, &req.Target)
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return res, nil
}

func (m *MySQL) resolveSlice(ctx context.Context, s *slice, t *sdk.Target) (*sdk.ResolveResponse, error) {
	if t.Owner != "" {
		st, err := m.claimStore(ctx, s.srv)
		if err == nil {
			err = checkClaim(ctx, s.srv.db, st, s, t)
		}
		if err != nil {
			return nil, err
		}
	}
	if !s.cfg.ownerUser {
		return s.srv.admin.resolve(s.db, s.cfg), nil
	}
	pw, err := m.ensureUser(ctx, s.srv, s.db, t.Slice, s.cfg.testDatabases)
	if err != nil {
		return nil, err
	}
	return s.srv.admin.as(userName(s.db), pw).resolve(s.db, s.cfg), nil
}

// Destroy drops the slice's database, with test_databases its test
// databases (testdb.go), and its user (owner_user) if it has one. One
// already gone is fine; one
// another home claimed is refused with code conflict and left whole.
func (m *MySQL) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := m.whileFull(ctx, s.srv, func() error { return m.destroy(ctx, s, &req.Target) }); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.DestroyResponse{}, nil
}

func (m *MySQL) destroy(ctx context.Context, s *slice, t *sdk.Target) error {
	st, err := m.claimStore(ctx, s.srv)
	if err != nil {
		return err
	}
	conn, err := lockSlice(ctx, s.srv.db, s.db)
	if err != nil {
		return err
	}
	defer unlockSlice(ctx, conn, s.db)
	if err := checkClaim(ctx, conn, st, s, t); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+s.q); err != nil {
		return fmt.Errorf("drop database %s: %w", s.q, err)
	}
	if s.cfg.testDatabases {
		if err := dropTestDatabases(ctx, conn, st, s.db); err != nil {
			return err
		}
	}
	if s.cfg.ownerUser {
		return dropUser(ctx, conn, s.db)
	}
	return nil
}

// Close closes every pool the adapter opened. sdk.Run does not call it
// today; the process exiting closes the connections as well.
func (m *MySQL) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for k, s := range m.servers {
		errs = append(errs, s.db.Close())
		delete(m.servers, k)
	}
	return errors.Join(errs...)
}

var _ sdk.Adapter = (*MySQL)(nil)
