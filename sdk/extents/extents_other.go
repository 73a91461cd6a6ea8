//go:build !linux

package extents

import "errors"

var ErrUnsupported = errors.New("extent maps (FIEMAP) are read on Linux only")

// File is Linux-only; elsewhere shared blocks are not told apart.
func File(string) (mapped, shared int64, err error) { return 0, 0, ErrUnsupported }
