//go:build !windows

package sqliteadapter

import (
	"context"
	"os"
)

// openShared is os.OpenFile: Unix lets a file be removed or renamed while
// it is open.
func openShared(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// holdForRemoval has nothing to do on Unix, where an open file never stops
// its removal.
func holdForRemoval(context.Context, []string) (func(), error) { return func() {}, nil }
