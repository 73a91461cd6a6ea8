package postgresadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
)

// Test databases. A test suite makes databases of its own beside the
// slice's: Django's test runner test_<NAME> (and test_<NAME>_1… with
// --parallel), Rails <app>_test (and <app>_test-0… in parallel), Go suites
// whatever their helper says (goatcounter_test_<random>). With config
// test_databases = true a slice may have them, and destroy (binky remove
// and reset) drops them:
//
//   - with owner_role the slice's role gets CREATEDB, so the suite can make
//     them, and it owns what it makes. PostgreSQL has no privilege to
//     create databases of some names only (and CREATE DATABASE fires no
//     event trigger), so the role may make a database of any free name;
//     destroy drops every database the role owns, whatever its name, before
//     it drops the role (which it could not drop while it owns one).
//   - without owner_role the application connects as the admin, which
//     may make any database; destroy then drops the databases named by the
//     convention (isTestDatabase) that carry no comment (a slice's
//     database carries its claim) and are no templates.

// isTestDatabase reports whether name follows the test-database naming
// convention of slice database db: <db>_test or test_<db>, alone or
// followed by '_' or '-' and anything (test_<db>_1, <db>_test-0,
// <db>_test_8f3a). test_<db>x is not one: it is test_<db'> of another
// slice db' = <db>x.
func isTestDatabase(db, name string) bool {
	for _, p := range []string{db + "_test", "test_" + db} {
		if name == p || strings.HasPrefix(name, p+"_") || strings.HasPrefix(name, p+"-") {
			return true
		}
	}
	return false
}

// testDatabases lists, over q, the test databases destroy drops for slice
// database db: every other database owned by role db when binky made that
// role, and with byName the unclaimed databases of the naming convention
// that no slice role owns.
func testDatabases(ctx context.Context, q querier, db string, byName bool) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT d.datname, d.datistemplate, coalesce(shobj_description(d.oid, 'pg_database'), ''),
		r.rolname, coalesce(shobj_description(r.oid, 'pg_authid'), '')
		FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE d.datname <> $1 ORDER BY d.datname`, db)
	if err != nil {
		return nil, fmt.Errorf("list the test databases of %q: %w", db, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name, comment, owner, ownerComment string
		var template bool
		if err := rows.Scan(&name, &template, &comment, &owner, &ownerComment); err != nil {
			return nil, fmt.Errorf("list the test databases of %q: %w", db, err)
		}
		switch {
		case owner == db && ownerComment == roleComment:
			out = append(out, name)
		case byName && isTestDatabase(db, name) && !template && comment == "" && ownerComment != roleComment:
			out = append(out, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the test databases of %q: %w", db, err)
	}
	return out, nil
}

// dropTestDatabases drops the test databases of slice database db (see
// testDatabases), each WITH (FORCE) where the server has it.
func dropTestDatabases(ctx context.Context, q querier, version int, db string, byName bool) error {
	names, err := testDatabases(ctx, q, db, byName)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := dropDatabase(ctx, q, version, n); err != nil {
			return fmt.Errorf("drop test database of slice %q: %w", db, err)
		}
	}
	return nil
}

// checkMaker refuses, with code conflict, to adopt database db when
// another slice's role owns it: with test_databases that role may create
// a database of any free name, this slice's too, and adopting it would
// hand this world what another world wrote.
func checkMaker(ctx context.Context, q querier, db string) error {
	var owner, comment string
	err := q.QueryRow(ctx, `SELECT r.rolname, coalesce(shobj_description(r.oid, 'pg_authid'), '')
		FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE d.datname = $1`, db).Scan(&owner, &comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up the owner of database %q: %w", db, err)
	}
	if comment == roleComment && owner != db {
		return sdk.Errorf(sdk.CodeConflict, "database %q was made by the role of slice %q (a test database under another slice's name); binky does not adopt it: drop it, or remove that slice's world", db, owner)
	}
	return nil
}
