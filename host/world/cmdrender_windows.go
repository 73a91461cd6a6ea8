//go:build windows

package world

import "github.com/binkyhq/binky/host/tokens"

// renderShellCmd renders a command for cmd.exe /v:on (host/cmdshell): token
// values travel in variables the command expands with delayed expansion,
// so cmd.exe never parses a value.
func renderShellCmd(s, self string, coords map[string]string) tokens.Shell {
	return tokens.RenderCmd(s, self, coords)
}
