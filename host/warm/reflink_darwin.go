package warm

import (
	"os"

	"golang.org/x/sys/unix"
)

// cloneFile makes dst a clone of src (clonefile: APFS). dst must not
// exist; on failure it does not.
func cloneFile(src, dst string, _ os.FileMode) error {
	return unix.Clonefile(src, dst, unix.CLONE_NOFOLLOW)
}
