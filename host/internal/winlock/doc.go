// Package winlock is binky's file lock on Windows, the twin of flock(2) on
// Unix: LockFileEx on one byte far past the end of the file, so the lock
// never covers the file's content (Windows byte-range locks are mandatory:
// a locked byte cannot be read by anyone else, and daemon.pid must stay
// readable). The lock belongs to the open handle and goes with it, also
// when the process dies, so a stale lock file is never mistaken for a live
// holder, whatever pid it names.
//
// The package builds on Windows only.
package winlock
