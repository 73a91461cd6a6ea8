package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// A registry on a disk that takes no new data. Opening a WAL database
// normally needs room: SQLite's shared-memory index (the -shm file, 32 KiB
// it writes to allocate) and, to migrate, log frames. So when the normal
// open fails and the directory is Unwritable, Open reads the registry
// through the first of these views that works, each of which writes
// nothing:
//
//   - no -wal, or an empty one (the last daemon stopped cleanly): the main
//     file is the whole database, read as immutable — no lock, no -wal or
//     -shm file made. Nothing else writes it meanwhile: only the daemon
//     writes binky.db, and this one is read-only.
//   - a -wal with frames (a daemon was killed): read-only through the -shm
//     file that daemon left, which sees what the log holds;
//   - failing that, read-write with locking_mode=EXCLUSIVE and query_only:
//     SQLite then keeps the log's index in memory, not in a -shm file, and
//     holds the file locked while the pool is open (one connection).
//
// Writes fail with ErrReadOnly; Reopen makes the registry writable again.
//
// OpenReadOnly opens a registry through the same views on purpose, for a
// reader that must never write (binkyd logs when no daemon answers).

// probeSize is what Unwritable writes: SQLite's shared-memory index (32 KiB)
// and a few pages of log.
const probeSize = 64 << 10

// SpaceKind says what keeps new data out of a directory.
type SpaceKind int

const (
	// DiskFull: the file system has no free space (ENOSPC;
	// ERROR_DISK_FULL on Windows).
	DiskFull SpaceKind = iota + 1
	// QuotaExceeded: the user's disk quota is spent (EDQUOT).
	QuotaExceeded
	// ReadOnlyFS: the file system is mounted read-only (EROFS;
	// ERROR_WRITE_PROTECT on Windows).
	ReadOnlyFS
)

// UnwritableError says why a directory takes no new data.
type UnwritableError struct {
	Dir  string
	Kind SpaceKind
	Err  error // the system's error
}

// Condition is the directory's state in words, with the system's error:
// "on a full disk (no space left on device)".
func (e *UnwritableError) Condition() string {
	switch e.Kind {
	case QuotaExceeded:
		return fmt.Sprintf("over its disk quota (%v)", e.Err)
	case ReadOnlyFS:
		return fmt.Sprintf("on a read-only file system (%v)", e.Err)
	}
	return fmt.Sprintf("on a full disk (%v)", e.Err)
}

func (e *UnwritableError) Error() string { return e.Dir + " is " + e.Condition() }

func (e *UnwritableError) Unwrap() error { return e.Err }

// Unwritable reports, as an *UnwritableError, why dir takes no new data —
// its disk is full, its quota spent, or its file system read-only — by
// writing (and removing) a probe file of probeSize bytes. It returns nil
// when the probe is written, and for any other failure (a permission, a
// missing directory): those are not a matter of room, and the caller's own
// operation reports them.
func Unwritable(dir string) error {
	f, err := os.CreateTemp(dir, ".binky-space-probe-*")
	if err != nil {
		return unwritable(dir, err)
	}
	_, err = f.Write(make([]byte, probeSize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	os.Remove(f.Name())
	if err != nil {
		return unwritable(dir, err)
	}
	return nil
}

// unwritable is err as an *UnwritableError of dir when it says the file
// system takes no new data, else nil.
func unwritable(dir string, err error) error {
	kind, sys := spaceKind(err)
	if kind == 0 {
		return nil
	}
	if abs, aerr := filepath.Abs(dir); aerr == nil {
		dir = abs
	}
	return &UnwritableError{Dir: dir, Kind: kind, Err: sys}
}

// errOpenedReadOnly is why a registry OpenReadOnly opened refuses writes.
var errOpenedReadOnly = errors.New("it was opened read-only")

// OpenReadOnly opens the registry at path for reading only, whatever room
// its directory has, and writes nothing at all: no file or directory is
// made, nothing is migrated, no -wal or -shm file is created where none is
// (the views at the top of this file, in their order). It is for a reader
// that must work where nothing can be written — a full disk, a read-only
// file system, a home the caller may only read.
//
// The registry must exist and be at this binary's schema: a newer or
// foreign file is refused as Open refuses it (ErrNewerSchema,
// ErrNotRegistry), and an older one, which only a migration could read,
// is refused saying so. Every write fails with ErrReadOnly, and Reopen
// never makes it writable. Close it soon: through the last view it holds
// the file locked while it is open.
func OpenReadOnly(ctx context.Context, path string) (*Registry, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open registry %s read-only: %w", path, err)
	}
	if _, err := inspect(path); err != nil {
		return nil, fmt.Errorf("open registry %s read-only: %w", path, err)
	}
	pool, err := openReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open registry %s read-only: %w", path, err)
	}
	return &Registry{path: path, lockWait: DefaultLockWait, now: time.Now, pool: pool, readOnly: errOpenedReadOnly}, nil
}

// ReadOnly reports why the registry refuses writes (an *UnwritableError,
// or an error saying OpenReadOnly opened it), or nil when it is writable.
func (r *Registry) ReadOnly() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readOnly
}

// Reopen makes a read-only registry writable again once its directory
// takes new data. It returns nil when the registry is writable (it was, or
// is now); else why it is still read-only, an *UnwritableError when its
// directory still takes nothing. Operations under way finish first; the
// registry keeps serving reads when reopening fails.
func (r *Registry) Reopen(ctx context.Context) error {
	switch ro := r.ReadOnly(); {
	case ro == nil:
		return nil
	case ro == errOpenedReadOnly:
		return fmt.Errorf("reopen registry %s for writing: %w", r.path, ro)
	}
	dir := filepath.Dir(r.path)
	if why := Unwritable(dir); why != nil {
		r.mu.Lock()
		if r.readOnly != nil {
			r.readOnly = why
		}
		r.mu.Unlock()
		return why
	}
	r.ops.Lock()
	defer r.ops.Unlock()
	// The exclusive view holds the file locked: close before reopening.
	r.mu.Lock()
	old, closed, ro := r.pool, r.closed, r.readOnly
	if !closed && ro != nil {
		r.pool = nil
	}
	r.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("reopen registry %s: it is closed", r.path)
	case ro == nil:
		return nil
	}
	if old != nil {
		old.Close()
	}
	current, err := inspect(r.path)
	var pool *sqlitex.Pool
	if err == nil {
		pool, err = openWritable(ctx, r.path, current)
	}
	if err == nil {
		if !r.install(pool, nil) {
			return fmt.Errorf("reopen registry %s: it was closed meanwhile", r.path)
		}
		return nil
	}
	why := Unwritable(dir)
	if why == nil {
		why = ro
	}
	if pool, rerr := openReadOnly(ctx, r.path); rerr == nil {
		r.install(pool, why)
	}
	return fmt.Errorf("reopen registry %s for writing: %w", r.path, err)
}

// install makes pool the registry's, read-only for readOnly (nil:
// writable), unless the registry was closed meanwhile: then pool is
// closed and install reports false.
func (r *Registry) install(pool *sqlitex.Pool, readOnly error) bool {
	r.mu.Lock()
	closed := r.closed
	if !closed {
		r.pool, r.readOnly = pool, readOnly
	}
	r.mu.Unlock()
	if closed {
		pool.Close()
	}
	return !closed
}

// readView is one way of reading the registry without writing to it.
type readView struct {
	uri     string
	flags   sqlite.OpenFlags
	size    int
	prepare sqlitex.ConnPrepareFunc
}

// openReadOnly opens a pool that reads the registry at path, which must be
// at this binary's schema, without writing anything (see the top of this
// file for the views, in the order they are tried).
func openReadOnly(ctx context.Context, path string) (*sqlitex.Pool, error) {
	var views []readView
	st, err := os.Stat(path + "-wal")
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && st.Size() == 0:
		views = append(views, readView{uri: immutableURI(path), flags: sqlite.OpenReadOnly | sqlite.OpenURI, size: poolSize, prepare: prepareConn})
	case err != nil:
		return nil, err
	default:
		views = append(views,
			readView{uri: path, flags: sqlite.OpenReadOnly, size: poolSize, prepare: prepareConn},
			readView{uri: path, flags: sqlite.OpenReadWrite, size: 1, prepare: prepareExclusive})
	}
	var errs []error
	for _, v := range views {
		pool, err := sqlitex.NewPool(v.uri, sqlitex.PoolOptions{Flags: v.flags, PoolSize: v.size, PrepareConn: v.prepare})
		if err == nil {
			if err = checkPool(ctx, pool, true); err != nil {
				pool.Close()
			}
		}
		if err == nil {
			return pool, nil
		}
		if errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrNotRegistry) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// prepareExclusive readies a connection that keeps the log's index in its
// own memory: locking_mode=EXCLUSIVE before the first read, so SQLite never
// makes or grows a -shm file; query_only, so nothing writes.
func prepareExclusive(conn *sqlite.Conn) error {
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA locking_mode = EXCLUSIVE;", nil); err != nil {
		return err
	}
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA query_only = ON;", nil); err != nil {
		return err
	}
	return prepareConn(conn)
}
