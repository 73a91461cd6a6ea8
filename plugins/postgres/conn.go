package postgresadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/binkyhq/binky/sdk"
)

// idleConnTime is how long a pool keeps an idle connection.
const idleConnTime = 2 * time.Second

// server is one admin URL's pool and what the adapter learnt about the
// server behind it. It lives as long as the process.
type server struct {
	url  *url.URL
	pool *pgxpool.Pool
	// version is server_version_num, 0 until first read (guarded by
	// Postgres.mu).
	version int
}

// server returns the pool of an admin URL, creating it on first use. The
// pool connects lazily.
func (p *Postgres) server(raw string) (*server, error) {
	u, err := parseAdminURL(raw)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[raw]; ok {
		return s, nil
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url is not a valid postgres URL: %s", scrub(err.Error(), raw))
	}
	cfg.MaxConns = 4
	cfg.MinConns = 0
	// An idle connection goes after a couple of seconds: calls of a batch
	// still reuse it, and an adapter kept alive (the RPC tier) does not
	// sit on the slots of a shared server that others wait for.
	cfg.MaxConnIdleTime = idleConnTime
	cfg.HealthCheckPeriod = idleConnTime / 2
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url: %s", scrub(err.Error(), raw))
	}
	s := &server{url: u, pool: pool}
	p.servers[raw] = s
	return s, nil
}

// serverVersion returns server_version_num (150020 for 15.20), read once.
func (p *Postgres) serverVersion(ctx context.Context, s *server) (int, error) {
	p.mu.Lock()
	v := s.version
	p.mu.Unlock()
	if v != 0 {
		return v, nil
	}
	if err := s.pool.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&v); err != nil {
		return 0, fmt.Errorf("read the server version: %w", err)
	}
	p.mu.Lock()
	s.version = v
	p.mu.Unlock()
	return v, nil
}

// querier is what pgxpool.Pool, pgxpool.Conn and pgx.Conn have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// ident quotes an identifier for SQL; names are never pasted.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// literal quotes a string constant for the statements that take no
// parameters (CREATE ROLE … PASSWORD). standard_conforming_strings is on on
// every supported server, so doubling the quote is enough; a NUL is refused.
func literal(s string) (string, error) {
	if strings.ContainsRune(s, 0) {
		return "", errors.New("a string constant cannot hold a NUL byte")
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
}

// SQLSTATE codes the adapter acts on.
const (
	codeDuplicateDatabase = "42P04"
	codeDuplicateObject   = "42710"
	codeUndefinedObject   = "42704"
	codeObjectInUse       = "55006"
	codeInvalidPassword   = "28P01"
	codeInvalidAuthSpec   = "28000"
	codeInsufficientPriv  = "42501"
	codeInvalidCatalog    = "3D000"
	codeCannotConnectNow  = "57P03"
	codeTooManyConns      = "53300"
	codeUndefinedTable    = "42P01"
	codeInvalidSchema     = "3F000"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every password of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: scrub(op+": "+se.Message, raw)}
	}
	msg := scrub(op+": "+err.Error(), raw)
	if pgCode(err) == codeTooManyConns {
		return &sdk.Error{Code: sdk.CodeUnreachable, Message: msg + fmt.Sprintf(" (the server is full: other clients hold max_connections, or the role its CONNECTION LIMIT; waited up to %s for a free connection)", fullWaitMax)}
	}
	return &sdk.Error{Code: classify(err), Message: msg + hint(classify(err))}
}

// classify picks the reply code of a driver error.
func classify(err error) sdk.Code {
	switch pgCode(err) {
	case codeInvalidPassword, codeInvalidAuthSpec, codeInsufficientPriv:
		return sdk.CodeAuth
	case codeInvalidCatalog:
		return sdk.CodeInvalid
	case codeCannotConnectNow, codeTooManyConns:
		return sdk.CodeUnreachable
	case "":
	default:
		return sdk.CodeInternal
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || sdk.IsNetworkError(err) {
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

// hint is the next step for a code, appended to the message.
func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the PostgreSQL server running and is admin_url's host and port right?)"
	case sdk.CodeAuth:
		return " (check admin_url's user and password, and that the role may CREATEDB; see docs/adapters.md)"
	}
	return ""
}

// scrub removes every password of the admin URL raw from a message, also
// pieces of it that a parse error quotes (sdk.ScrubAdmin).
func scrub(msg, raw string) string { return sdk.ScrubAdmin(msg, raw) }
