//go:build windows

package mcp

import "os"

// ProtocolOutput takes the process's stdout for the protocol alone: it
// returns the stdout file and points os.Stdout at stderr, so later writes to
// os.Stdout inside this process land on stderr instead of corrupting the
// JSON-RPC stream. Call it once, before serving.
func ProtocolOutput() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
