//go:build !windows

package world

import "github.com/binkyhq/binky/host/tokens"

// renderShellCmd renders a command for sh -c: token values travel in
// variables the command references, quoted for where they sit.
func renderShellCmd(s, self string, coords map[string]string) tokens.Shell {
	return tokens.RenderShell(s, self, coords)
}
