package postgresadapter

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/binkyhq/binky/sdk/extents"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Copy-on-write worlds: a clone by STRATEGY = FILE_COPY with
// file_copy_method = clone (PostgreSQL 18+) shares the template's blocks
// where the filesystem can reflink, and the server says nothing when it
// cannot (copy_file_range then copies the bytes). So the adapter reports a
// clone as requested, and, when it can read the server's data directory
// here, looks at the clone's extents (FIEMAP) and reports what the
// filesystem did.
//
// A clone stays shared only while nothing rewrites its pages, and the
// first read of a freshly loaded row sets its hint bits, which rewrites
// the page. So the template is frozen (VACUUM (FREEZE)) before it is
// cloned: its tuples are marked frozen and all-visible once, in the
// template, and a world's reads write nothing.

// freeze runs VACUUM (FREEZE) in database db. On an already frozen
// database it is cheap (the visibility map lets it skip every page), so it
// runs before every clone rather than keeping state about it. It issues no
// CHECKPOINT: the clone's own checkpoint writes the pages it dirtied.
func freeze(ctx context.Context, pool *pgxpool.Pool, db string) error {
	cfg := pool.Config().ConnConfig.Copy()
	cfg.Database = db
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to template %q to freeze it: %w", db, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "VACUUM (FREEZE)"); err != nil {
		return fmt.Errorf("freeze template %q (VACUUM (FREEZE)): %w", db, err)
	}
	return nil
}

// sharing is what the filesystem did with a clone's files.
type sharing int

const (
	sharingUnknown sharing = iota // the data directory is not readable here
	sharingShared                 // the clone's blocks are the template's
	sharingCopied                 // the clone's blocks are its own
)

// verifyClone looks at the extents of database db's files in the server's
// data directory, when that directory is on this machine (its pg_control
// names the same system as the server's) and readable. The reason is why
// it could not tell, for the logs of whoever asks.
func verifyClone(ctx context.Context, q querier, db string) (sharing, string) {
	dir, why := databaseDir(ctx, q, db)
	if dir == "" {
		return sharingUnknown, why
	}
	mapped, shared, err := extents.Dir(dir)
	switch {
	case err != nil:
		return sharingUnknown, err.Error()
	case mapped == 0:
		return sharingUnknown, "the clone's files map no blocks yet"
	case shared*2 >= mapped:
		return sharingShared, ""
	}
	return sharingCopied, ""
}

// databaseDir is the directory of db's files in the server's data
// directory, or "" and why not.
func databaseDir(ctx context.Context, q querier, db string) (string, string) {
	var dataDir string
	var sysID string
	var oid, spc uint32
	var spcName string
	err := q.QueryRow(ctx, `SELECT current_setting('data_directory'), (SELECT system_identifier::text FROM pg_control_system()),
		d.oid, d.dattablespace, t.spcname
		FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE d.datname = $1`, db).
		Scan(&dataDir, &sysID, &oid, &spc, &spcName)
	if err != nil {
		return "", "the server does not say where its data directory is: " + err.Error()
	}
	if !sameSystem(dataDir, sysID) {
		return "", "the server's data directory is not readable here"
	}
	if spcName == "pg_default" {
		return filepath.Join(dataDir, "base", strconv.FormatUint(uint64(oid), 10)), ""
	}
	// A tablespace: pg_tblspc/<spc>/PG_<major>_<catversion>/<oid>.
	matches, _ := filepath.Glob(filepath.Join(dataDir, "pg_tblspc", strconv.FormatUint(uint64(spc), 10), "PG_*", strconv.FormatUint(uint64(oid), 10)))
	if len(matches) != 1 {
		return "", "the database's tablespace directory is not readable here"
	}
	return matches[0], ""
}

// sameSystem reports whether dataDir here holds the cluster whose
// system identifier is sysID: the first 8 bytes of global/pg_control.
func sameSystem(dataDir, sysID string) bool {
	f, err := os.Open(filepath.Join(dataDir, "global", "pg_control"))
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return strconv.FormatUint(binary.NativeEndian.Uint64(b[:]), 10) == sysID
}
