// Package logview reads a world's service logs for people and agents:
// `binky logs` and the MCP logs tool. Services write their log files
// themselves, so the files hold raw output; logview owns redacting them as
// they are read (every secret the registry records) and the bounded tail
// and grep the MCP tool returns.
package logview
