// Package api is the daemon's wire protocol and its client. The CLI and the
// MCP server both talk to the daemon through Client; nothing else crosses
// daemon.sock.
//
// A call is one JSON line from the client ({"op":…,"args":…}); the daemon
// answers with zero or more progress lines ({"progress":{…}}) and exactly one
// final line ({"result":…} or {"error":{…}}), then closes the connection.
package api
