// Package mcp is `binky mcp`: a Model Context Protocol server over stdio
// whose tools (up, down, status, env, verify, logs, reset) call the same daemon API
// as the CLI (package api, through ctl.Ensure). It owns the tool schemas,
// turning daemon results into structured tool results with a one-line
// summary, turning daemon failures into tool errors an agent can read, and
// turning the daemon's progress and verify output frames into MCP progress
// notifications. Nothing but protocol messages reaches stdout, and no
// reply grows with an argument or past a fixed size (bounds.go).
package mcp
