//go:build !linux && !darwin

package sqliteadapter

import (
	"errors"
	"os"
)

// reflink is not implemented here; copyFile copies the bytes instead.
func reflink(string, string, os.FileMode) error {
	return errors.ErrUnsupported
}
