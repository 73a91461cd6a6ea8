// Package listeners owns the question "who listens on this TCP port": the
// listening sockets of this network namespace (on Linux, /proc/net/tcp and
// /proc/net/tcp6), the processes that hold them (socket inodes found in
// /proc/<pid>/fd), and which of them answers a connection to a given
// address. ports.Owner names a port's holder with it; the supervisor uses
// Check so that a health probe counts only when the socket that answered is
// held by the service's own processes.
//
// Where the platform cannot tell (no /proc: macOS, the BSDs, Windows, or a
// /proc that is not mounted), Listening returns an error wrapping
// errors.ErrUnsupported and Check passes: the probe's answer is then taken
// at its word, as before. The package imports nothing of binky's, so the
// supervisor can use it without linking the registry.
package listeners
