package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker: -X github.com/binkyhq/binky/cmd/internal/cli.version=… (and .commit).
var (
	version = "dev"
	commit  = ""
)

// Version is what --version prints: version, commit and Go version.
func Version() string {
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	if len(c) > 12 {
		c = c[:12]
	}
	return fmt.Sprintf("binky %s (commit %s, %s %s/%s)", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Number is the bare version (what the MCP server announces).
func Number() string { return version }
