package mysqladapter

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Test databases (config test_databases = true). A test suite makes
// databases of its own beside the slice's: Django's test runner
// test_<NAME> (test_<NAME>_1… with --parallel), Rails <app>_test
// (<app>_test-0… in parallel), Go suites whatever their helper says
// (<db>_test_<random>). With test_databases the slice user (owner_user)
// is granted ALL on exactly those names, so it may create and drop them
// and no other database, and destroy (binky remove and reset) drops the
// unclaimed databases of those names, whoever made them.

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

// testPatterns are the database-level GRANT patterns of db's test
// databases (isTestDatabase), quoted.
func testPatterns(db string) []string {
	var out []string
	for _, base := range []struct{ pre, post string }{{"", "_test"}, {"test_", ""}} {
		for _, tail := range []string{"", `\_%`, "-%"} {
			// The prefix and suffix are escaped with db; the tail is the
			// pattern.
			q, err := grantPattern(base.pre+db+base.post, tail)
			if err == nil {
				out = append(out, q)
			}
		}
	}
	return out
}

// dropTestDatabases drops, over conn, the databases of db's test-database
// names that record no claim (a slice's database records its home's
// claim).
func dropTestDatabases(ctx context.Context, conn *sql.Conn, st claimStore, db string) error {
	rows, err := conn.QueryContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
	if err != nil {
		return fmt.Errorf("list the test databases of %q: %w", db, err)
	}
	var found []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("list the test databases of %q: %w", db, err)
		}
		if isTestDatabase(db, name) {
			found = append(found, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list the test databases of %q: %w", db, err)
	}
	for _, name := range found {
		_, claim, err := readClaim(ctx, conn, st, name)
		if err != nil {
			return err
		}
		if claim != "" {
			continue
		}
		q, err := quoteIdent(name)
		if err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+q); err != nil {
			return fmt.Errorf("drop test database %s of slice %q: %w", q, db, err)
		}
	}
	return nil
}
