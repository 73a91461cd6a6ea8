// Package ctl is the caller's side of the daemon: finding a running daemon
// for a BINKY_HOME, starting one detached when none answers, and stopping it.
// The CLI and the MCP server use it; the protocol itself is package api.
package ctl
