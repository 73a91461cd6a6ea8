//go:build unix

package admission

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// diskFree is the total and available (to unprivileged users) bytes of the
// filesystem holding dir.
func diskFree(dir string) (total, free uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return uint64(st.Blocks) * uint64(st.Bsize), uint64(st.Bavail) * uint64(st.Bsize), nil
}
