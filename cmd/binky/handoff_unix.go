//go:build !windows

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execBinkyd replaces this process with binkyd: same pid, stdio, signals
// and exit status, no parent left waiting.
func execBinkyd(bin string, args []string) int {
	err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "binky: run %s: %v\n", bin, err)
	return 1
}
