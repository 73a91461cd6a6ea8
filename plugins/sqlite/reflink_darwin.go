package sqliteadapter

import (
	"os"

	"golang.org/x/sys/unix"
)

// reflink makes dst a clone of src (clonefile: APFS). On failure dst does
// not exist.
func reflink(dst, src string, _ os.FileMode) error {
	return unix.Clonefile(src, dst, unix.CLONE_NOFOLLOW)
}
