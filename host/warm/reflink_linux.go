package warm

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/binkyhq/binky/host/safefile"
)

// cloneFile makes dst share src's blocks (FICLONE: XFS, btrfs, bcachefs).
// dst is created and must not exist; on failure it is removed. src is
// opened only when it is a regular file (safefile.OpenRegular).
func cloneFile(src, dst string, perm os.FileMode) error {
	in, err := safefile.OpenRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	err = unix.IoctlFileClone(int(out.Fd()), int(in.Fd()))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}
