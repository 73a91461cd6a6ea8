// Package mcp is `binky mcp`: a Model Context Protocol server over stdio
// whose tools (up, down, status, env, ports, verify, logs, reset, restart,
// stop, start, run) call the same daemon API as the CLI (package api,
// through ctl.Ensure), each defaulting to the world of the worktree the server runs in, and
// whose resources are each world's env and recent logs (resources.go). It
// owns the tool schemas,
// turning daemon results into structured tool results with a one-line
// summary, turning daemon failures into tool errors an agent can read, and
// turning the daemon's progress and verify output frames into MCP progress
// notifications. Nothing but protocol messages reaches stdout, and no
// reply grows with an argument or past a fixed size (bounds.go). A client
// that stops reading stdout holds up no call: progress is dropped, never
// an answer (writer.go).
package mcp
