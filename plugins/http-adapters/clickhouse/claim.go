package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// ownersDB is the database that holds the owner claims: one view per
// slice database, named like it, whose one row is the claim text.
// ClickHouse 18.16 has no database comment (system.databases has no
// comment column there), so the claim cannot live on the database itself.
// The name starts with '_', which no slice name does (names.IsSlice), so
// no slice's database is ever it.
const ownersDB = "_binky_owners"

// claimStmt is the statement that records claim for the database db: a
// view whose one row is the claim, so the claim is written in one
// statement, never as an empty marker a crash could leave behind.
func claimStmt(db, claim string) string {
	return "CREATE VIEW " + quoteIdent(ownersDB) + "." + quoteIdent(db) + " AS SELECT " + quoteString(claim) + " AS claim"
}

// what names the slice's database and server in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("database %s on %s", s.db, s.ep.Base.Host)
}

// readClaim returns the claim recorded for the slice's database, or ""
// when none is (no owners database, or no view for this database).
func (c *ClickHouse) readClaim(ctx context.Context, s *slice) (string, error) {
	out, err := c.exec(ctx, s.ep, "SELECT claim FROM "+quoteIdent(ownersDB)+"."+quoteIdent(s.db)+" LIMIT 1")
	if err != nil {
		if code := serverCode(err); code == codeUnknownTable || code == codeUnknownDatabase {
			return "", nil
		}
		return "", fmt.Errorf("read the owner claim of database %s (%s.%s): %w", s.db, ownersDB, s.db, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// checkClaim refuses t when the slice's database is claimed by another
// owner; it returns the claim it read. It reads nothing for a target with
// no owner (an older host).
func (c *ClickHouse) checkClaim(ctx context.Context, s *slice, t *sdk.Target) (string, error) {
	if t.Owner == "" {
		return "", nil
	}
	claim, err := c.readClaim(ctx, s)
	if err != nil {
		return "", err
	}
	return claim, t.CheckClaim(s.what(), claim)
}

// writeClaim records t's claim on the slice's database, replacing any
// claim recorded before (a stale one of a database dropped by hand, or
// none). It does nothing for a target with no owner.
func (c *ClickHouse) writeClaim(ctx context.Context, s *slice, t *sdk.Target) error {
	claim := t.Claim()
	if claim == "" {
		return nil
	}
	for _, stmt := range []string{
		"CREATE DATABASE IF NOT EXISTS " + quoteIdent(ownersDB),
		"DROP TABLE IF EXISTS " + quoteIdent(ownersDB) + "." + quoteIdent(s.db),
		claimStmt(s.db, claim),
	} {
		if _, err := c.exec(ctx, s.ep, stmt); err != nil {
			return fmt.Errorf("record the owner claim of database %s in %s.%s: %w", s.db, ownersDB, s.db, err)
		}
	}
	return nil
}

// dropClaim removes the claim recorded for the slice's database, if any.
func (c *ClickHouse) dropClaim(ctx context.Context, s *slice) error {
	if _, err := c.exec(ctx, s.ep, "DROP TABLE IF EXISTS "+quoteIdent(ownersDB)+"."+quoteIdent(s.db)); err != nil {
		if code := serverCode(err); code == codeUnknownDatabase {
			return nil
		}
		return fmt.Errorf("drop the owner claim of database %s (%s.%s): %w", s.db, ownersDB, s.db, err)
	}
	return nil
}

// ClickHouse exception codes the claim code tells apart.
const (
	codeUnknownTable    = 60
	codeUnknownDatabase = 81
)

// serverCode is the ClickHouse exception code err carries, or -1.
func serverCode(err error) int {
	var se *chError
	if errors.As(err, &se) {
		return se.code
	}
	return -1
}
