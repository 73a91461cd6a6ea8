//go:build windows

package supervisor

import "slices"

// cgroupOf: no cgroups on Windows.
func cgroupOf(int) string { return "" }

// hasMarker reports whether pid is in the job of the service marked value:
// on Windows that job is where every process the service started lives.
func hasMarker(pid int, value string) bool {
	return slices.Contains(markedProcesses(value), pid)
}

// ownPids: Windows' listeners are not told from /proc (listeners.Check
// passes there).
func ownPids(*run) []int { return nil }
