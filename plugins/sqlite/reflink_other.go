//go:build !linux && !darwin

package sqliteadapter

import (
	"errors"
	"os"
)

// This platform offers no reflink call Binky uses; copyFile copies the bytes.
func reflink(string, string, os.FileMode) error {
	return errors.ErrUnsupported
}
