//go:build !windows

package wine

// Under is false outside Windows.
func Under() bool { return false }
