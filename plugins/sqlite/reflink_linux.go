package sqliteadapter

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reflink makes dst share src's blocks (FICLONE: Btrfs, XFS, bcachefs…).
// On failure dst does not exist.
func reflink(dst, src string, perm os.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, out.Close())
		if err != nil {
			os.Remove(dst)
		}
	}()
	return unix.IoctlFileClone(int(out.Fd()), int(in.Fd()))
}
