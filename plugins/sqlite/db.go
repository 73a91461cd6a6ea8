package sqliteadapter

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/binkyhq/binky/sdk"
)

// busyTimeout is how long a statement waits for another process's lock
// (milliseconds); the call's context may end the wait sooner.
const busyTimeout = 30000

// openDB opens the database file at path with one connection, creating it
// if absent. The path travels as a SQLite URI, escaped, so no character of
// it is read as a parameter.
func openDB(path string) (*sql.DB, error) {
	escaped := (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)", escaped, busyTimeout)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// dbError classifies an error from SQLite about the slice file at path
// while doing what.
func dbError(what, path string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return sdk.Errorf(sdk.CodeConflict, "%s %s: the file is not a usable SQLite database (%v); move it away or destroy the slice", what, path, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return sdk.Errorf(sdk.CodeConflict, "%s %s: another process holds the database lock (%v); stop the writer and retry", what, path, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY:
			return sdk.Errorf(sdk.CodeInternal, "%s %s: cannot open or write the file (%v); check the directory's permissions", what, path, err)
		}
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}
