//go:build !linux && !darwin

package warm

import (
	"errors"
	"os"
)

// cloneFile has no copy-on-write clone on this platform (ReFS block
// cloning is not reached yet): Copy byte-copies.
func cloneFile(src, dst string, perm os.FileMode) error {
	return errors.ErrUnsupported
}
