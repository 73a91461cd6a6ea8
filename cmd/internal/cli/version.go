package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker: -X github.com/binkyhq/binky/cmd/internal/cli.version=… (and .commit).
// Empty: read from the build info (see buildVersion).
var (
	version = ""
	commit  = ""
)

// buildVersion is the version and commit: what the linker set; else, from
// debug.ReadBuildInfo, the main module's version (`go install …@v1.2.3`
// records it) and its vcs.revision (a plain `go build` in a checkout, with
// a "+dirty" mark for uncommitted changes); else "dev" and "unknown".
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		if rev == "" {
			dirty := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" && dirty {
				rev += "+dirty"
			}
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	if len(rev) > 12 && rev[12] != '+' {
		rev = rev[:12]
	}
	return ver, rev
}

// Version is what --version prints: version, commit and Go version.
func Version() string {
	v, c := buildVersion()
	return fmt.Sprintf("binky %s (commit %s, %s %s/%s)", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Number is the bare version (what the MCP server announces).
func Number() string {
	v, _ := buildVersion()
	return v
}
