package mysqladapter

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/binkyhq/binky/sdk"
)

// maxIdleConns is how many idle connections a pool keeps.
const maxIdleConns = 2

// server is one admin URL's connection pool. It lives as long as the
// process.
type server struct {
	admin *admin
	db    *sql.DB
	// claims is where the server keeps owner claims, storeUnknown until
	// first looked up (guarded by MySQL.mu).
	claims claimStore
}

// server returns the pool of an admin URL, creating it on first use. The
// pool connects lazily.
func (m *MySQL) server(raw string) (*server, error) {
	a, err := parseAdmin(raw)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.servers[raw]; ok {
		return s, nil
	}
	cfg := a.cfg.Clone()
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalid, "admin_url: %s", sdk.ScrubAdmin(err.Error(), raw))
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(maxIdleConns)
	// An idle connection goes after a couple of seconds: calls of a batch
	// still reuse it, and an adapter kept alive (the RPC tier) does not
	// sit on the slots of a shared server that others wait for.
	db.SetConnMaxIdleTime(2 * time.Second)
	s := &server{admin: a, db: db}
	m.servers[raw] = s
	return s, nil
}

// discard closes a dedicated connection instead of returning it to the
// pool, so the session state a clone changed (default database, sql_mode,
// foreign_key_checks) never leaks into another call.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}

// Server error numbers the adapter acts on.
const (
	erDBAccessDenied     = 1044
	erAccessDenied       = 1045
	erBadDB              = 1049
	erTableAccessDenied  = 1142
	erSpecificAccess     = 1227
	erTooManyConnections = 1040
	erHostNotPrivileged  = 1130
	erAccessDeniedNoPW   = 1698
	erNoSuchTable        = 1146
	erViewInvalid        = 1356
	erSPDoesNotExist     = 1305
	erDBCreateExists     = 1007
	erBadField           = 1054
)

func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every password of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: sdk.ScrubAdmin(op+": "+se.Message, raw)}
	}
	if serverFull(err) {
		return &sdk.Error{Code: sdk.CodeUnreachable, Message: sdk.ScrubAdmin(op+": "+err.Error()+
			fmt.Sprintf(" (the server is full: other clients hold max_connections, or the user its max_user_connections; waited up to %s for a free connection)", fullWaitMax), raw)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: sdk.ScrubAdmin(op+": "+err.Error()+hint(code), raw)}
}

// classify picks the reply code of a driver error.
func classify(err error) sdk.Code {
	switch errNumber(err) {
	case erAccessDenied, erDBAccessDenied, erTableAccessDenied, erSpecificAccess, erAccessDeniedNoPW, erHostNotPrivileged:
		return sdk.CodeAuth
	case erBadDB:
		return sdk.CodeInvalid
	case erTooManyConnections:
		return sdk.CodeUnreachable
	case 0:
	default:
		return sdk.CodeInternal
	}
	if sdk.IsNetworkError(err) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) {
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the MySQL/MariaDB server running and is admin_url's host and port right?)"
	case sdk.CodeAuth:
		return " (check admin_url's user and password, and the privileges docs/adapters.md lists)"
	}
	return ""
}

// schemaOf looks up a database's default character set and collation;
// ok is false when it does not exist.
func schemaOf(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, db string) (charset, collation string, ok bool, err error) {
	err = q.QueryRowContext(ctx,
		"SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).
		Scan(&charset, &collation)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	return charset, collation, true, nil
}
