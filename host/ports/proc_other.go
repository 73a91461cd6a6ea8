//go:build !linux && !windows

package ports

import "os"

// procStart is unknown without /proc: a lease's daemon is never taken for
// alive, and its home alone keeps its claim.
func procStart(int) uint64 { return 0 }

// procAlive: see procStart.
func procAlive(int, uint64, string) bool { return false }

// lockHolder cannot be told without /proc/locks.
func lockHolder(*os.File) (int, string) { return 0, "" }

// unprivilegedPortStart is the traditional bound.
func unprivilegedPortStart() int { return 1024 }
