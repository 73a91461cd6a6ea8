package main

import (
	"fmt"
	"os"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/ctl"
)

// The verbs binkyd runs. binky knows their flags (for help and
// completion) but hands the command line to binkyd before parsing it, so
// binky never links MCP, adapter RPC, certificates or the registry.
type (
	handoffCheck    struct{ cli.Check }
	handoffDoctor   struct{ cli.Doctor }
	handoffLogs     struct{ cli.Logs }
	handoffTrust    struct{ cli.Trust }
	handoffAdapters struct{ cli.Adapters }
	handoffMcp      struct{ cli.Mcp }
	handoffAdapter  struct {
		Test handoffAdapterTest `cmd:"" help:"Run the conformance suite against a discovered adapter binary (any language)."`
	}
	handoffAdapterTest struct{ cli.AdapterTest }
)

// handedOffVerbs are binkyd's top-level verbs; `daemon run` is the one
// binkyd subcommand of a verb binky keeps.
var handedOffVerbs = map[string]bool{
	"check": true, "doctor": true, "logs": true, "trust": true,
	"adapters": true, "adapter": true, "mcp": true,
}

// handedOff reports whether args name a verb binkyd runs. It skips binky's
// own flags (--home takes a value) to find the verb.
func handedOff(args []string) bool {
	var words []string
	for i := 0; i < len(args) && len(words) < 2; i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--home":
			i++ // its value
		case len(a) > 0 && a[0] == '-':
		default:
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		return false
	}
	if words[0] == "daemon" {
		return len(words) == 2 && words[1] == "run"
	}
	return handedOffVerbs[words[0]]
}

// handOff runs args with binkyd (next to this binary, else on PATH) and
// returns its exit status; on Unix binkyd replaces this process and
// handOff returns only when that fails.
func handOff(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky: find this binary to locate binkyd:", err)
		return 1
	}
	bin, err := ctl.DaemonBinary(exe)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return 1
	}
	return execBinkyd(bin, args)
}
