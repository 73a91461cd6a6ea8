package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// moveAside is the next step every refusal gives.
const moveAside = "move it aside or set BINKY_HOME to another directory"

// inspect decides, before anything opens path for writing (which would
// switch it to WAL mode and migrate it), whether it may be Binky's registry.
// It reads the 100-byte SQLite header itself, and lists the schema of a
// database without an application id through an immutable read-only
// connection, so it writes nothing and leaves no -wal or -shm file.
//
// A missing or empty file, a database with Binky's application id and a
// schema no newer than this binary's, and an empty SQLite database pass.
// Anything else is refused with ErrNotRegistry or ErrNewerSchema and the
// reason. When a WAL-mode database without an application id has a -wal
// file beside it, the header may be stale (Binky's own registry before its
// first checkpoint), so the decision is left to checkVersion on the open
// connection.
//
// current reports a header with Binky's application id and this binary's
// schema version: a registry Open need not create or migrate.
func inspect(path string) (current bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	var h [100]byte
	n, err := io.ReadFull(f, h[:])
	switch {
	case n == 0 && (err == nil || errors.Is(err, io.EOF)):
		return false, nil // a new, empty file: ours to make
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return false, err
	case n < len(h) || string(h[:len(sqliteMagic)]) != sqliteMagic:
		return false, fmt.Errorf("%w: it is not a SQLite database; %s", ErrNotRegistry, moveAside)
	}
	version := int32(binary.BigEndian.Uint32(h[60:64]))
	appID := int32(binary.BigEndian.Uint32(h[68:72]))
	switch appID {
	case AppID:
		return version == SchemaVersion, newerCheck(version)
	case 0:
	default:
		return false, foreignID(appID)
	}
	walMode := h[18] == 2 && h[19] == 2 // Binky's registry is always WAL
	if st, err := os.Stat(path + "-wal"); walMode && err == nil && st.Size() > 0 {
		return false, nil
	}
	names, err := schemaNames(path)
	if err != nil {
		return false, fmt.Errorf("%w: it cannot be read as a SQLite database (%v); %s", ErrNotRegistry, err, moveAside)
	}
	return false, foreignSchema(names)
}

func newerCheck(version int32) error {
	if version > SchemaVersion {
		return fmt.Errorf("%w: its schema version is %d, this binky's is %d; upgrade binky, or set BINKY_HOME to another directory", ErrNewerSchema, version, SchemaVersion)
	}
	return nil
}

func foreignID(appID int32) error {
	return fmt.Errorf("%w: it is a SQLite database of another program (application_id %#x, Binky's is %#x); %s", ErrNotRegistry, appID, AppID, moveAside)
}

// foreignSchema refuses a database without an application id that already
// holds a schema: Binky sets its id in the same transaction as its first
// table, so such a schema is someone else's.
func foreignSchema(names []string) error {
	if len(names) == 0 {
		return nil
	}
	shown := names
	if len(shown) > 3 {
		shown = append(shown[:3:3], "…")
	}
	return fmt.Errorf("%w: it is a SQLite database of another program (no application id, and it holds %s); %s", ErrNotRegistry, strings.Join(shown, ", "), moveAside)
}

// schemaNames lists the tables, indexes, views and triggers of the database
// at path, reading the main file only (immutable: no locks, no -wal or
// -shm).
func schemaNames(path string) ([]string, error) {
	conn, err := sqlite.OpenConn(immutableURI(path), sqlite.OpenReadOnly|sqlite.OpenURI)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var names []string
	err = sqlitex.ExecuteTransient(conn, "SELECT name FROM sqlite_master ORDER BY rowid;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			names = append(names, stmt.ColumnText(0))
			return nil
		},
	})
	return names, err
}

// immutableURI is a read-only, immutable SQLite URI for path.
func immutableURI(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x on Windows
	}
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	return "file://" + p + "?mode=ro&immutable=1"
}
