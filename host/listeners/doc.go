// Package listeners owns two questions about this host's TCP sockets.
//
// "Who listens on this TCP port": the listening sockets of this network
// namespace on that port, the processes that hold them (socket inodes
// found in /proc/<pid>/fd), and which of them answers a connection to a
// given address. On Linux the socket that takes a connection to an
// address is asked of the kernel's own lookup over netlink sock_diag (an
// exact request, whose cost does not grow with the machine's sockets),
// else the listeners of the one port are (a dump filtered by port);
// sockdiag.go writes the requests and reads the replies, built and fuzzed
// everywhere, and sockdiag_linux.go sends them on one netlink socket the
// process keeps. Where netlink cannot be used, all of /proc/net/tcp and
// /proc/net/tcp6 is read instead. ports.Owner names a port's holder with it; the
// supervisor uses a Vetter so that a health probe counts only when the
// socket that answered is held by the service's own processes: the
// holder is looked for in the service's processes' descriptors first and
// in every process's only when none of them holds it, and a verdict is
// kept while the same socket (inode) answers, so a periodic probe of a
// service that keeps its listener costs one netlink round trip. Where the
// platform cannot tell (no /proc: macOS, the BSDs, Windows, or a /proc
// that is not mounted), Listening returns an error wrapping
// errors.ErrUnsupported and Check passes: the probe's answer is then taken
// at its word, as before.
//
// "Who is at the other end of this local connection": PeerOf tells whether
// the client of a TCP connection between two sockets of this host is this
// process's user; the proxy serves its own pages (the dashboard, the route
// list) only to that user. On Linux it is the uid of the socket whose
// local address is the client's and whose remote address is the server's,
// in /proc/net/tcp or tcp6 (PeerUID; a table is read only up to that
// line). On Windows it is the user of the process that owns the
// connection (GetExtendedTcpTable with TCP_TABLE_OWNER_PID_CONNECTIONS,
// then that process's token), compared with this process's; the tables are
// read by code (tcptable.go) that is built and fuzzed everywhere. Elsewhere
// PeerOf returns an error wrapping errors.ErrUnsupported. ErrNoPeer says no
// socket of this host is the client (a remote client, or it closed).
//
// The package imports nothing of binky's, so the supervisor and the proxy
// can use it without linking the registry.
package listeners
