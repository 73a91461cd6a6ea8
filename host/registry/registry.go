package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitemigration"
	"zombiezen.com/go/sqlite/sqlitex"
)

// FileName is the registry's file name inside BINKY_HOME.
const FileName = "binky.db"

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotFound: no such worktree, service, verify run or port block.
	ErrNotFound = errors.New("not found")
	// ErrNewerSchema: the database was written by a newer Binky.
	ErrNewerSchema = errors.New("registry was written by a newer binky")
	// ErrNotRegistry: the file is a SQLite database of another program.
	ErrNotRegistry = errors.New("not a binky registry")
	// ErrPortBlockOverlap: a port block would overlap another worktree's.
	ErrPortBlockOverlap = errors.New("port block overlaps another block")
	// ErrReadOnly: a write to a registry opened read-only (ReadOnly says
	// why).
	ErrReadOnly = errors.New("registry is read-only")
	// ErrUnknownState: a world or service state that is not one of
	// host/state's, or a world state only ever reported (queued, absent).
	ErrUnknownState = errors.New("not a state the registry records")
)

// poolSize is how many connections the registry keeps: readers run in
// parallel (WAL), writers queue for the write lock.
const poolSize = 4

// DefaultLockWait bounds how long an operation whose context has no deadline
// waits for the database (another writer holding the lock).
const DefaultLockWait = 30 * time.Second

const openFlags = sqlite.OpenReadWrite | sqlite.OpenCreate | sqlite.OpenWAL

// Registry is binky.db. It is safe for concurrent use; several processes
// may open the same file.
//
// A registry whose directory takes no new data (a full disk, a quota, a
// read-only file system: readonly.go) is opened read-only: every read
// works, every write fails with ErrReadOnly, and Reopen makes it writable
// again once there is room.
type Registry struct {
	path     string
	lockWait time.Duration
	now      func() time.Time

	// ops is held for reading by every operation, and for writing while
	// Reopen swaps the pool (the exclusive read-only view holds the file
	// locked until its pool is closed).
	ops sync.RWMutex
	// mu guards the fields below, briefly.
	mu       sync.Mutex
	pool     *sqlitex.Pool // nil when closed, or after a Reopen that could open nothing
	readOnly error         // why writes are refused (an *UnwritableError); nil when writable
	closed   bool
}

// Open opens (creating, with mode 0600, and migrating) the registry at path,
// usually $BINKY_HOME/binky.db. A database whose schema is newer than this
// binary's is refused with ErrNewerSchema, naming both versions; a file that
// is not SQLite, or is another program's database, with ErrNotRegistry. A
// refused file is checked before anything writes to it, and is left
// byte for byte as it was.
//
// A registry already at this binary's schema is opened without writing
// anything. When it cannot be opened for writing because its directory
// takes no new data (Unwritable), it is opened read-only instead (ReadOnly
// says why); an older schema, which would need migrating, cannot be.
func Open(ctx context.Context, path string) (*Registry, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open registry %s: %w", path, err)
	}
	current, err := inspect(path)
	if err != nil {
		return nil, fmt.Errorf("open registry %s: %w", path, err)
	}
	r := &Registry{path: path, lockWait: DefaultLockWait, now: time.Now}
	pool, err := openWritable(ctx, path, current)
	if err == nil {
		r.pool = pool
		return r, nil
	}
	if errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrNotRegistry) || ctx.Err() != nil {
		return nil, fmt.Errorf("open registry %s: %w", path, err)
	}
	why := Unwritable(filepath.Dir(path))
	if why == nil {
		return nil, fmt.Errorf("open registry %s: %w", path, err)
	}
	pool, rerr := openReadOnly(ctx, path)
	if rerr != nil {
		return nil, fmt.Errorf("open registry %s: %v, and it cannot be read without writing: %w", path, why, rerr)
	}
	r.pool, r.readOnly = pool, why
	return r, nil
}

// openWritable opens the registry's pool for reading and writing. A file
// already at this binary's schema (current, from its header) is neither
// created nor migrated: opening it writes nothing.
func openWritable(ctx context.Context, path string, current bool) (*sqlitex.Pool, error) {
	if !current {
		// Create the file ourselves so it (and the -wal and -shm files
		// SQLite gives the same mode) is private: addresses may hold
		// credentials.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	// Several processes opening a brand-new file at once can race on
	// switching it to WAL mode (SQLITE_IOERR/BUSY for the losers); such an
	// error is transient, so retry it briefly.
	for attempt := 0; ; attempt++ {
		var (
			pool *sqlitex.Pool
			err  error
		)
		if !current {
			err = migrate(ctx, path)
		}
		if err == nil {
			pool, err = sqlitex.NewPool(path, sqlitex.PoolOptions{
				Flags:       openFlags,
				PoolSize:    poolSize,
				PrepareConn: prepareConn,
			})
		}
		if err == nil && current {
			// The header said current; the -wal may say newer.
			if err = checkPool(ctx, pool, false); err != nil {
				pool.Close()
			}
		}
		if err == nil {
			return pool, nil
		}
		if attempt >= 20 || !transient(err) || ctx.Err() != nil {
			return nil, err
		}
		if Unwritable(filepath.Dir(path)) != nil {
			return nil, err // not a race: there is no room to open it
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
}

// checkPool runs checkVersion on one of pool's connections; exact also
// refuses a schema older than this binary's (a read-only registry cannot
// migrate it).
func checkPool(ctx context.Context, pool *sqlitex.Pool, exact bool) error {
	conn, err := pool.Take(ctx)
	if err != nil {
		return err
	}
	defer pool.Put(conn)
	if err := checkVersion(conn); err != nil {
		return err
	}
	if !exact {
		return nil
	}
	v, err := pragmaInt(conn, "user_version")
	if err != nil {
		return err
	}
	if v != SchemaVersion {
		return fmt.Errorf("its schema version is %d and this binky needs %d, which takes writing to it", v, SchemaVersion)
	}
	return nil
}

// transient reports whether err is a lock or I/O race worth retrying.
func transient(err error) bool {
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultBusy, sqlite.ResultIOErr, sqlite.ResultLocked:
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "disk I/O error") || strings.Contains(msg, "database is locked")
}

func prepareConn(conn *sqlite.Conn) error {
	return sqlitex.ExecuteTransient(conn, "PRAGMA foreign_keys = ON;", nil)
}

// migrate checks the file is Binky's and not newer than this binary, then
// applies the migrations it lacks.
func migrate(ctx context.Context, path string) error {
	conn, err := sqlite.OpenConn(path, openFlags)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetInterrupt(ctx.Done())
	if err := checkVersion(conn); err != nil {
		return err
	}
	if err := sqlitemigration.Migrate(ctx, conn, schema()); err != nil {
		return err
	}
	// A newer binary may have migrated between the check and ours.
	return checkVersion(conn)
}

// checkVersion is inspect's check made through an open connection, which
// sees what the -wal file holds too.
func checkVersion(conn *sqlite.Conn) error {
	appID, err := pragmaInt(conn, "application_id")
	if err != nil {
		return err
	}
	switch appID {
	case AppID:
	case 0:
		var names []string
		err := sqlitex.ExecuteTransient(conn, "SELECT name FROM sqlite_master ORDER BY rowid;", &sqlitex.ExecOptions{
			ResultFunc: func(stmt *sqlite.Stmt) error {
				names = append(names, stmt.ColumnText(0))
				return nil
			},
		})
		if err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		if err := foreignSchema(names); err != nil {
			return err
		}
	default:
		return foreignID(appID)
	}
	v, err := pragmaInt(conn, "user_version")
	if err != nil {
		return err
	}
	return newerCheck(v)
}

func pragmaInt(conn *sqlite.Conn, name string) (int32, error) {
	var v int32
	err := sqlitex.ExecuteTransient(conn, "PRAGMA "+name+";", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			v = stmt.ColumnInt32(0)
			return nil
		},
	})
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	return v, nil
}

// Path is the database file.
func (r *Registry) Path() string { return r.path }

// Close closes every connection, interrupting operations under way and
// waiting for them.
func (r *Registry) Close() error {
	r.mu.Lock()
	pool := r.pool
	r.pool, r.closed = nil, true
	r.mu.Unlock()
	if pool == nil {
		return nil
	}
	if err := pool.Close(); err != nil {
		return fmt.Errorf("close registry %s: %w", r.path, err)
	}
	return nil
}

// take gets a connection whose work is interrupted when ctx ends, or after
// lockWait when ctx has no deadline. For a write, a read-only registry
// answers ErrReadOnly with the reason instead.
func (r *Registry) take(ctx context.Context, writing bool) (*sqlite.Conn, func(), error) {
	r.ops.RLock()
	r.mu.Lock()
	pool, readOnly := r.pool, r.readOnly
	r.mu.Unlock()
	switch {
	case writing && readOnly != nil:
		r.ops.RUnlock()
		return nil, nil, fmt.Errorf("%w: %w", ErrReadOnly, readOnly)
	case pool == nil:
		r.ops.RUnlock()
		return nil, nil, fmt.Errorf("registry %s is not open", r.path)
	}
	cancel := func() {}
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, r.lockWait)
	}
	conn, err := pool.Take(ctx)
	if err != nil {
		cancel()
		r.ops.RUnlock()
		return nil, nil, err
	}
	return conn, func() { pool.Put(conn); cancel(); r.ops.RUnlock() }, nil
}

// read runs fn on a connection (outside a write transaction).
func (r *Registry) read(ctx context.Context, fn func(*sqlite.Conn) error) error {
	conn, done, err := r.take(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	return fn(conn)
}

// write runs fn inside BEGIN IMMEDIATE: the write lock is taken before
// anything is read, so what fn reads cannot change before it writes, and a
// busy database is waited for instead of failing.
func (r *Registry) write(ctx context.Context, fn func(*sqlite.Conn) error) (err error) {
	conn, done, err := r.take(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	end, err := sqlitex.ImmediateTransaction(conn)
	if err != nil {
		return err
	}
	defer end(&err)
	return fn(conn)
}

func execute(conn *sqlite.Conn, query string, fn func(*sqlite.Stmt) error, args ...any) error {
	return sqlitex.Execute(conn, query, &sqlitex.ExecOptions{Args: args, ResultFunc: fn})
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
