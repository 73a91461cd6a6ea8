package ports

import "github.com/binkyhq/binky/host/listeners"

// Owner says who listens on TCP port: "pid 1234 (python3 -m http.server)",
// from /proc/net/tcp{,6} and the processes' descriptors (host/listeners).
// It returns "" when the holder is not visible to this user (another user's
// process, a container), the port is not held, or the platform cannot tell
// (no /proc).
func Owner(port int) string { return listeners.Holder(port) }

// OwnerPid is the pid of Owner, or 0.
func OwnerPid(port int) int { return listeners.HolderPid(port) }
