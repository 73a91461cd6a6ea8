package postgresadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/binkyhq/binky/sdk"
)

// A slice's owner claim (sdk.Target.Claim) is the comment of its database:
// COMMENT ON DATABASE, read back with shobj_description. A comment belongs
// to the database, so it goes when the database is dropped, it is not
// copied by CREATE DATABASE … TEMPLATE (a clone gets its own), and only the
// database's owner or a superuser may set it. With owner_role the slice's
// role owns the database and so could rewrite its own claim, which only
// unclaims or gives away its own slice; without owner_role the application
// connects as the admin, and no claim is out of its reach. Claims keep
// binky homes apart; they do not fence the application.

// claimLockClass is the first key of the advisory lock
// (pg_advisory_lock(int, int); the second key is hashtext of the database
// name) a call holds while it reads a slice's claim and then creates,
// claims or drops the database, so that two homes cannot both take one
// slice, nor one drop what the other just adopted. The two-key locks do
// not share a key space with secretLock.
const claimLockClass = 0x62636c6d // "bclm"

// lockSlice takes the claim lock of database db on a connection of its
// own, which every statement of the locked section then runs on (a second
// connection from the small pool could wait for ever while all of them are
// held). unlockSlice gives it back.
func lockSlice(ctx context.Context, pool *pgxpool.Pool, db string) (*pgxpool.Conn, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", claimLockClass, db); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock the owner claim of database %q: %w", db, err)
	}
	return conn, nil
}

// unlockSlice releases the claim lock of db and the connection; when the
// lock cannot be released the connection is closed, which releases it.
func unlockSlice(ctx context.Context, conn *pgxpool.Conn, db string) {
	ctx = context.WithoutCancel(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", claimLockClass, db).Scan(&ok); err != nil || !ok {
		_ = conn.Conn().Close(ctx)
	}
	conn.Release()
}

// dbClaim reports whether database db exists and its comment, where the
// owner claim is kept ("" when it has none).
func dbClaim(ctx context.Context, q querier, db string) (exists bool, comment string, err error) {
	var c *string
	err = q.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", db).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("read the owner claim of database %q: %w", db, err)
	}
	if c != nil {
		comment = *c
	}
	return true, comment, nil
}

// recordClaim sets the comment of database db to claim.
func recordClaim(ctx context.Context, q querier, db, claim string) error {
	lit, err := literal(claim)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, "COMMENT ON DATABASE "+ident(db)+" IS "+lit); err != nil {
		return fmt.Errorf("record the owner claim of database %q: %w", db, err)
	}
	return nil
}

// checkClaim refuses, with code conflict, a target whose slice database
// exists and is claimed by another home. A database that does not exist,
// or carries no claim, passes. Nothing is read for a host that sends no
// owner.
func checkClaim(ctx context.Context, q querier, s *slice, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	_, comment, err := dbClaim(ctx, q, s.db)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(), comment)
}

// keepClaim, for a database that exists with comment, refuses another
// home's claim and otherwise records t's: it adopts an unclaimed database
// (overwriting a comment that is not a claim) and refreshes the label of
// its own.
func keepClaim(ctx context.Context, q querier, s *slice, t *sdk.Target, comment string) error {
	if err := t.CheckClaim(s.what(), comment); err != nil {
		return err
	}
	if claim := t.Claim(); claim != "" && claim != comment {
		return recordClaim(ctx, q, s.db, claim)
	}
	return nil
}

// what names the slice's database in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("database %q on %s", s.db, s.srv.where())
}

// where is the server's host and port, or its socket directory.
func (s *server) where() string {
	if s.url.Host != "" {
		return s.url.Host
	}
	if h := s.url.Query().Get("host"); h != "" {
		return h
	}
	return "the server"
}
