package mysqladapter

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/binkyhq/binky/sdk"
)

// Where a slice's owner claim (sdk.Target.Claim) is kept depends on the
// server. MariaDB 10.5 and later give a database a comment
// (information_schema.SCHEMATA.SCHEMA_COMMENT), which the claim is: it is
// made in the same CREATE DATABASE as the database, goes when the database
// is dropped, and is no table the application sees, dumps or drops. Oracle
// MySQL, Percona Server and older MariaDB have no schema comment; there the
// claim is the one row of a marker table, claimTable, inside the slice's
// database, where the application sees it and a tool that drops every
// table drops it too (the slice is then unclaimed, and adopted again by
// the next provision). Either way the application connects with the
// admin's credentials (resolve hands them out), so no claim is out of its
// reach: claims keep binky homes apart, they do not fence the application.

// claimTable is the marker table that holds the claim on a server without
// schema comments. clone never copies it from the source.
const claimTable = "_binky_owner"

// claimStore says where a server keeps claims.
type claimStore int

const (
	storeUnknown claimStore = iota // not looked up yet
	storeComment                   // the database's comment (MariaDB 10.5+)
	storeTable                     // the marker table claimTable
)

// claimStore returns where srv keeps claims, asking the server once:
// whether information_schema.SCHEMATA has the column SCHEMA_COMMENT.
func (m *MySQL) claimStore(ctx context.Context, srv *server) (claimStore, error) {
	m.mu.Lock()
	st := srv.claims
	m.mu.Unlock()
	if st != storeUnknown {
		return st, nil
	}
	rows, err := srv.db.QueryContext(ctx, "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE 1 = 0")
	switch {
	case err == nil:
		st = storeComment
		if err := closeRows(rows); err != nil {
			return storeUnknown, fmt.Errorf("look for schema comments: %w", err)
		}
	case errNumber(err) == erBadField:
		st = storeTable
	default:
		return storeUnknown, fmt.Errorf("look for schema comments: %w", err)
	}
	m.mu.Lock()
	srv.claims = st
	m.mu.Unlock()
	return st, nil
}

// queryer is what *sql.DB and *sql.Conn have in common.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// lockWait is how long, in seconds, a call waits for another call to let
// go of a slice's claim lock.
const lockWait = 60

// lockSlice takes the claim lock of database db (GET_LOCK, named after a
// hash of db) on a connection of its own, which every statement of the
// locked section then runs on: a call holds it while it reads a slice's
// claim and then creates, claims or drops the database, so that two homes
// cannot both take one slice, nor one drop what the other just adopted.
// unlockSlice gives it back.
func lockSlice(ctx context.Context, pool *sql.DB, db string) (*sql.Conn, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := lockOn(ctx, conn, db); err != nil {
		discard(conn)
		return nil, err
	}
	return conn, nil
}

// lockOn takes the claim lock of db on conn, held until it is released or
// the session ends.
func lockOn(ctx context.Context, conn *sql.Conn, db string) error {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lockName(db), lockWait).Scan(&got); err != nil {
		return fmt.Errorf("lock the owner claim of database %q: %w", db, err)
	}
	if !got.Valid || got.Int64 != 1 {
		return sdk.Errorf(sdk.CodeConflict, "another call has held the owner claim lock of database %q for %d s; try again", db, lockWait)
	}
	return nil
}

// unlockSlice releases the claim lock of db and the connection; when the
// lock cannot be released the connection is closed, which releases it.
func unlockSlice(ctx context.Context, conn *sql.Conn, db string) {
	var released sql.NullInt64
	err := conn.QueryRowContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", lockName(db)).Scan(&released)
	if err != nil || !released.Valid || released.Int64 != 1 {
		discard(conn)
		return
	}
	_ = conn.Close()
}

// lockName is the GET_LOCK name of db's claim: at most 64 characters
// (MySQL's limit) whatever the database's name.
func lockName(db string) string {
	sum := sha256.Sum256([]byte(db))
	return "binky-claim:" + hex.EncodeToString(sum[:16])
}

// readClaim reports whether database db exists and the claim it records
// ("" when none).
func readClaim(ctx context.Context, q queryer, st claimStore, db string) (exists bool, claim string, err error) {
	if st == storeComment {
		err = q.QueryRowContext(ctx, "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&claim)
		if errors.Is(err, sql.ErrNoRows) {
			return false, "", nil
		}
		if err != nil {
			return false, "", fmt.Errorf("read the owner claim of database %q: %w", db, err)
		}
		return true, claim, nil
	}
	var n int
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&n); err != nil {
		return false, "", fmt.Errorf("look for database %q: %w", db, err)
	}
	if n == 0 {
		return false, "", nil
	}
	table, err := qualified(db, claimTable)
	if err != nil {
		return true, "", err
	}
	err = q.QueryRowContext(ctx, "SELECT claim FROM "+table+" WHERE id = 1").Scan(&claim)
	switch {
	case errors.Is(err, sql.ErrNoRows), errNumber(err) == erNoSuchTable:
		return true, "", nil
	case err != nil:
		return true, "", fmt.Errorf("read the owner claim of database %q: %w", db, err)
	}
	return true, claim, nil
}

// recordClaim makes database db record claim: its comment, or the row of
// its marker table.
func recordClaim(ctx context.Context, q queryer, st claimStore, db, claim string) error {
	qdb, err := quoteIdent(db)
	if err != nil {
		return err
	}
	if st == storeComment {
		lit, err := quoteString(claim)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, "ALTER DATABASE "+qdb+" COMMENT = "+lit); err != nil {
			return fmt.Errorf("record the owner claim of database %q: %w", db, err)
		}
		return nil
	}
	table, err := qualified(db, claimTable)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+table+
		" (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, claim VARCHAR(255) NOT NULL)"+
		" COMMENT 'binky: the binky home that owns this database; see docs/adapters.md'"); err != nil {
		return fmt.Errorf("make the owner claim table of database %q: %w", db, err)
	}
	if _, err := q.ExecContext(ctx, "REPLACE INTO "+table+" (id, claim) VALUES (1, ?)", claim); err != nil {
		return fmt.Errorf("record the owner claim of database %q: %w", db, err)
	}
	return nil
}

// checkClaim refuses, with code conflict, a target whose slice database
// exists and is claimed by another home. A database that does not exist,
// or carries no claim, passes. Nothing is read for a host that sends no
// owner.
func checkClaim(ctx context.Context, q queryer, st claimStore, s *slice, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	_, claim, err := readClaim(ctx, q, st, s.db)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(), claim)
}

// keepClaim, for a database that exists recording claim, refuses another
// home's claim and otherwise records t's: it adopts an unclaimed database
// (overwriting a comment that is not a claim) and refreshes the label of
// its own.
func keepClaim(ctx context.Context, q queryer, st claimStore, s *slice, t *sdk.Target, claim string) error {
	if err := t.CheckClaim(s.what(), claim); err != nil {
		return err
	}
	if own := t.Claim(); own != "" && own != claim {
		return recordClaim(ctx, q, st, s.db, own)
	}
	return nil
}

// what names the slice's database in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("database %q on %s", s.db, s.srv.admin.cfg.Addr)
}
