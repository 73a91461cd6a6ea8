//go:build !windows

package remote

import (
	"os"
	"syscall"
)

// ownedByUs tells whether fi's file belongs to this process's user.
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
