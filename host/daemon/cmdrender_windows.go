//go:build windows

package daemon

import "github.com/binkyhq/binky/host/tokens"

// renderShellCmd renders a command for cmd /C. cmd.exe has no quoting that
// keeps a value from being parsed, so values are pasted in as written
// (docs/config.md says so).
func renderShellCmd(s, self string, coords map[string]string) tokens.Shell {
	return tokens.Shell{Command: tokens.Render(s, self, coords)}
}
