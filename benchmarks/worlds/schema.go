package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// sqlFiles are the migrate and seed scripts every world runs, in both arms.
type sqlFiles struct{ migrate, seed string }

const migrateSQL = `CREATE TABLE items (
	id         bigint PRIMARY KEY,
	name       text NOT NULL,
	payload    text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
`

const seedSQL = `INSERT INTO items (id, name, payload)
SELECT g, 'item ' || g, md5(g::text) FROM generate_series(1, %d) AS g;
`

// writeSQL writes migrate.sql and seed.sql (rows rows) into dir.
func writeSQL(dir string, rows int) (sqlFiles, error) {
	f := sqlFiles{migrate: filepath.Join(dir, "migrate.sql"), seed: filepath.Join(dir, "seed.sql")}
	if err := os.WriteFile(f.migrate, []byte(migrateSQL), 0o644); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.seed, fmt.Appendf(nil, seedSQL, rows), 0o644); err != nil {
		return f, err
	}
	return f, nil
}
