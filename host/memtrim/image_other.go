//go:build !linux

package memtrim

// trimImage does nothing where the executable's mappings cannot be listed:
// the heap trim is all there is.
func trimImage() (Result, error) { return Result{}, nil }
