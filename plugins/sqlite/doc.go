// Package sqliteadapter is binky-adapter-sqlite, Binky's embedded default
// adapter: it needs no server. A slice is one SQLite database file,
// <dir>/<slice>.db, in WAL mode, where dir is the service's config "dir"
// (absolute, or relative to the request's data_dir) or else
// <data_dir>/<project>.
//
// resolve answers sqlite://<absolute path> (sqlite:///home/me/x.db) and the
// plain path in values["path"]. clone copies the source file while holding
// its write lock, so a writer in another process can never tear the copy;
// the copy is a reflink where the filesystem has them (Btrfs, XFS, APFS) and
// a byte copy elsewhere. The SQLite engine is pure Go (modernc.org/sqlite):
// no cgo.
//
// Each slice's owner (the binky home that made or adopted it, see
// sdk.Target.Claim) is recorded in a file beside the database,
// <dir>/<slice>.db.binky-owner, which the application's SQL never sees and
// a clone never copies. provision writes it before it makes the database
// (adopting a database that has none), clone writes the target's before it
// moves the copy into place, and every verb refuses with code "conflict" a
// slice, or a clone source, another home claimed, before touching it;
// destroy removes the claim last.
//
// On Windows every handle the adapter opens itself on a slice's files
// shares their deletion (openShared), and destroy, like a clone replacing
// a slice, removes nothing while another process holds one of its files
// open without FILE_SHARE_DELETE: after a short wait it refuses with code
// conflict, naming the file and, where Windows' Restart Manager tells, the
// process (inuse_windows.go).
package sqliteadapter
