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
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *MySQL { return &MySQL{servers: map[string]*server{}} }

// Describe says who the adapter is: mysql (aliases mariadb, percona), able
// to clone.
func (*MySQL) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"mariadb", "percona"}, Clone: true}, nil
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

// Provision creates the slice's database; one that exists is kept.
func (m *MySQL) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	stmt := "CREATE DATABASE IF NOT EXISTS " + s.q
	if s.cfg.charset != "" {
		stmt += " CHARACTER SET " + s.cfg.charset
	}
	if s.cfg.collation != "" {
		stmt += " COLLATE " + s.cfg.collation
	}
	var n int
	if err := s.srv.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", s.db).Scan(&n); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("look for database %s: %w", s.q, err))
	}
	if _, err := s.srv.db.ExecContext(ctx, stmt); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("create database %s: %w", s.q, err))
	}
	return sdk.Provisioned(n > 0), nil
}

// Resolve answers mysql://user:password@host:port/<database> with the
// admin credentials, and values "database" and "dsn".
func (m *MySQL) Resolve(_ context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	a := s.srv.admin
	return &sdk.ResolveResponse{
		Address: a.sliceURL(s.db),
		Values:  map[string]string{"database": s.db, "dsn": a.sliceDSN(s.db)},
	}, nil
}

// Destroy drops the slice's database. One already gone is fine.
func (m *MySQL) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy mysql slice %q", req.Slice)
	s, err := m.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if _, err := s.srv.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+s.q); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("drop database %s: %w", s.q, err))
	}
	return &sdk.DestroyResponse{}, nil
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
