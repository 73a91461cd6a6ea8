package golden

import "strings"

// What a clone did with the template's blocks, read from the method an
// adapter reported (Sharing).
const (
	// SharingCopyOnWrite: the clone shares the template's blocks until
	// either writes them (a reflink, PostgreSQL 18's file_copy_method =
	// clone seen on disk).
	SharingCopyOnWrite = "copy-on-write"
	// SharingCopied: the clone is a copy of every byte.
	SharingCopied = "copied"
	// SharingUnverified: a copy-on-write clone was asked for, and the
	// adapter could not see whether the filesystem made one.
	SharingUnverified = "unverified"
)

// Sharing classifies a clone method: SharingCopyOnWrite for a method that
// says so ("reflink", or one holding "copy-on-write"), SharingUnverified
// for one holding "clone requested", "" for no method, and SharingCopied
// for any other (a file copy, WAL_LOG, a table copy): a method that does
// not claim shared blocks never gets them claimed for it.
func Sharing(method string) string {
	switch {
	case method == "":
		return ""
	case method == "reflink", strings.Contains(method, "copy-on-write"):
		return SharingCopyOnWrite
	case strings.Contains(method, "clone requested"):
		return SharingUnverified
	}
	return SharingCopied
}
