// Command binkyd is binky's other half: the daemon and the verbs that link
// heavy packages (MCP, adapter RPC, certificates, the registry). binky
// hands these verbs off to it (syscall.Exec), so `binky mcp` and
// `binkyd mcp` are the same command and binky's own start stays light.
// main wires the kong CLI; each verb lives in its own file.
package main

import (
	"context"
	"os"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

// grammar is what binkyd runs; binky's grammar lists the same verbs with
// the same flags (cli's flag structs).
type grammar struct {
	Version kong.VersionFlag `help:"Print the version, commit and Go version, then exit."`
	Home    string           `name:"home" env:"BINKY_HOME" help:"State directory (default ~/.binky)." placeholder:"DIR"`

	Check    checkCmd    `cmd:"" help:"Validate binky.toml and flag footguns."`
	Doctor   doctorCmd   `cmd:"" help:"Check this machine and Binky's state; exits non-zero when something is wrong."`
	Logs     logsCmd     `cmd:"" help:"A world's service logs."`
	Daemon   daemonCmd   `cmd:"" help:"Run the daemon."`
	Trust    trustCmd    `cmd:"" help:"Install Binky's local CA into the system and browser trust stores (--uninstall removes it)."`
	Adapters adaptersCmd `cmd:"" help:"List the adapters found on PATH and in $BINKY_HOME/adapters: name, aliases, tiers, clone, protocol, binary."`
	Adapter  adapterCmd  `cmd:"" help:"Act on one adapter (adapter test NAME runs the conformance suite)."`
	Mcp      mcpCmd      `cmd:"" name:"mcp" help:"Serve the Model Context Protocol over stdio (tools up, down, status, env, ports, verify, logs, reset, restart; world env and log resources)."`
}

// globals is handed to every verb's Run.
type globals struct {
	ctx  context.Context
	home string
}

// client returns a client for the daemon, starting it when needed.
func (g *globals) client() (*api.Client, error) { return cli.Client(g.ctx, g.home) }

type exitError = cli.ExitError

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var c grammar
	return cli.Main(args, &c, &c.Home, func(ctx context.Context, home string) any {
		return &globals{ctx: ctx, home: home}
	})
}
