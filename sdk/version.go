package sdk

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set by the linker when binky's Makefile (or a packager) builds an
// adapter: -X github.com/binkyhq/binky/sdk.version=v1.2.3 and
// -X github.com/binkyhq/binky/sdk.commit=<revision>. Every binary built on
// Run carries them, third-party adapters included, because the sdk is
// linked into each.
var (
	version = ""
	commit  = ""
)

// BuildVersion returns the version and commit of the running adapter
// binary: what the linker set; else, from debug.ReadBuildInfo, the main
// module's version (`go install …@v1.2.3` records it) and vcs.revision;
// else "dev" and "unknown".
func BuildVersion() (ver, rev string) {
	ver, rev = version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return ver, rev
}

// printVersion answers --version: the adapter's name (from its describe),
// its version, the protocol it speaks and the commit it was built from.
func printVersion(ctx context.Context, a Adapter, prog string, w io.Writer) int {
	name, ver := prog, ""
	if d, err := a.Describe(ctx, &DescribeRequest{Header: Header{Protocol: Protocol}}); err == nil && d != nil {
		if d.Name != "" {
			name = BinaryPrefix + d.Name
		}
		ver = d.Version
	}
	bver, rev := BuildVersion()
	if ver == "" {
		ver = bver
	}
	fmt.Fprintf(w, "%s %s (protocol %d, commit %s, %s %s/%s)\n", name, ver, Protocol, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}

// BinaryPrefix starts the file name of every adapter binary:
// binky-adapter-<name>.
const BinaryPrefix = "binky-adapter-"
