//go:build !linux

package postgresadapter

import "errors"

var errNoFiemap = errors.New("extent maps (FIEMAP) are read on Linux only")

// fileExtents is Linux-only; elsewhere a clone stays unverified.
func fileExtents(string) (mapped, shared int64, err error) { return 0, 0, errNoFiemap }
