//go:build !linux

package ports

// Owner says who listens on TCP port; this platform does not tell, so it
// is always "".
func Owner(int) string { return "" }

// OwnerPid is the pid of Owner; always 0 here.
func OwnerPid(int) int { return 0 }
