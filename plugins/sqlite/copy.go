package sqliteadapter

import (
	"fmt"
	"io"
	"os"
)

// copyFile creates dst as a copy of src: a reflink where the filesystem
// supports one, else a byte copy. It returns MethodReflink or MethodCopy.
// Both files are opened shared for deletion (openShared), so the copy
// never stops another process from removing or replacing either.
func copyFile(dst, src string) (string, error) {
	in, err := openShared(src, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", fmt.Errorf("inspect %s: %w", src, err)
	}
	if err := reflink(dst, src, fi.Mode().Perm()); err == nil {
		return MethodReflink, nil
	}
	out, err := openShared(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return "", fmt.Errorf("create %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", fmt.Errorf("flush %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", dst, err)
	}
	return MethodCopy, nil
}
