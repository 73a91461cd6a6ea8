//go:build !linux

package sqliteadapter

import "errors"

var errNoFiemap = errors.New("extent maps (FIEMAP) are read on Linux only")

// fileExtents is Linux-only; elsewhere shared blocks are not told apart.
func fileExtents(string) (mapped, shared int64, err error) { return 0, 0, errNoFiemap }
