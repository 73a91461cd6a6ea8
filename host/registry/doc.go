// Package registry owns binky.db, the SQLite registry of every world under
// one BINKY_HOME: worktrees and their state, the names they hold (a stable
// name, their hostnames: names.go), their services (process ids,
// ports, resolved addresses, restarts), verify runs, and the machine-global
// port blocks, whose non-overlap the database itself enforces. The states
// it stores are host/state's vocabulary: a world state only ever reported
// (queued, absent) or any string outside it is refused with
// ErrUnknownState, so what status and MCP read back is always one of them.
//
// The file is opened in WAL mode, and its schema is migrated in place with
// sqlitemigration under Binky's application id. A file that is not SQLite,
// another program's database, or one written by a newer Binky is refused
// with the reason before anything writes to it (refuse.go), so a refused
// file keeps its bytes and gets no -wal or -shm beside it. Every write runs in a
// BEGIN IMMEDIATE transaction, so writers from several goroutines or
// processes queue for the lock instead of failing with SQLITE_BUSY.
//
// Opening a registry already at this binary's schema writes nothing. On a
// directory that takes no new data (a full disk, a spent quota, a
// read-only file system: Unwritable) the registry is opened read-only
// instead (readonly.go): reads work, writes fail with ErrReadOnly, and
// Reopen makes it writable once there is room again. OpenReadOnly opens
// one for reading only through the same views, writing nothing at all,
// for a reader that must work where nothing can be written (binkyd logs
// with no daemon). No other package reads binky.db with SQL of its own.
//
// A service's Address may hold credentials: callers redact it before showing
// it to anyone.
package registry
