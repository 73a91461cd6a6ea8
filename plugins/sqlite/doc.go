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
package sqliteadapter
