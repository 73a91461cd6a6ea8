//go:build !windows

package doctor

import (
	"io/fs"
	"os"
	"syscall"
)

// socketMode checks the daemon socket is private to this user.
func socketMode(sock string, st fs.FileInfo) []Finding {
	var out []Finding
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		out = append(out, fail("chmod 600 "+sock, "the daemon socket %s is mode %#o: other users can reach it", sock, perm))
	} else {
		out = append(out, ok("the daemon socket is mode %#o", perm))
	}
	if sys, isSys := st.Sys().(*syscall.Stat_t); isSys && int(sys.Uid) != os.Getuid() {
		out = append(out, fail("binky daemon stop, then remove "+sock, "the daemon socket %s belongs to uid %d, not to you (uid %d)", sock, sys.Uid, os.Getuid()))
	}
	return out
}
