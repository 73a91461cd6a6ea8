// Package api is the daemon's wire protocol and its client. The CLI and the
// MCP server both talk to the daemon through Client; nothing else crosses
// daemon.sock.
//
// A call is one JSON line from the client ({"op":…,"args":…}); the daemon
// answers with zero or more progress lines ({"progress":{…}}) and exactly one
// final line ({"result":…} or {"error":{…}}), then closes the connection.
//
// It owns the daemon's endpoint too: the socket it listens on, 0600, and
// kept while the daemon runs (ListenSocket, KeepSocket, listen_unix.go),
// or on Windows the named pipe (ListenPipe).
//
// It owns every type that crosses the wire, the plan of `up` included
// (Plan, which host/world/plan computes), and imports nothing else of
// host/: it stands below the engine and the daemon (host/fence_test.go).
//
// An Error carries a code and a message on the wire. In the daemon's
// process it also keeps the error it was made from (Errorf's %w operand,
// or Wrap's), so errors.Is and errors.As see through it; that cause is
// never encoded.
package api
