// Command binky gives every git worktree of a repository its own running
// world. main wires the kong CLI; each verb lives in its own file with a Run
// method and calls into host/. The verbs that need heavy packages (the
// daemon, MCP, adapters, certificates, the registry) are binkyd's: binky
// hands them off (handoff.go), so env and status start light, and the
// plain command lines of --version, env and status skip kong (fast.go).
package main

import (
	"context"
	"os"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/cmd/internal/cli"
)

// grammar is the whole command line. Only verbs that really work are
// listed; the handoff* verbs are binkyd's (handoff.go).
type grammar struct {
	Version kong.VersionFlag `help:"Print the version, commit and Go version, then exit."`
	Home    string           `name:"home" env:"BINKY_HOME" help:"State directory (default ~/.binky)." placeholder:"DIR"`
	Host    string           `name:"host" env:"BINKY_HOST" help:"Run the verb on this host of hosts.toml, over ssh (docs/remote.md); any: the first that admits (up)." placeholder:"NAME"`

	Check    handoffCheck    `cmd:"" help:"Validate binky.toml and flag footguns."`
	Init     initCmd         `cmd:"" help:"Write a first binky.toml from the docker-compose project here (never copying a secret)."`
	Doctor   handoffDoctor   `cmd:"" help:"Check this machine and Binky's state; exits non-zero when something is wrong."`
	Up       upCmd           `cmd:"" help:"Bring a branch's world up (creating its worktree when needed)."`
	Down     downCmd         `cmd:"" help:"Stop a world's processes; files, ports and slices stay."`
	Remove   removeCmd       `cmd:"" help:"Destroy a world: processes, slices, ports, logs and its worktree."`
	Status   statusCmd       `cmd:"" help:"Every world on the machine, grouped by project."`
	Top      topCmd          `cmd:"" help:"Every world's memory, CPU, disk and slices, the most memory first, refreshing (--once, --json)."`
	Env      envCmd          `cmd:"" help:"A world's exposed coordinates (the [agents] expose set)."`
	Logs     handoffLogs     `cmd:"" help:"A world's service logs."`
	Daemon   daemonCmd       `cmd:"" help:"Start, stop or inspect the daemon."`
	Verify   verifyCmd       `cmd:"" help:"Run a world's [agents] verify commands and record the result."`
	Run      runCmd          `cmd:"" help:"Run a command in a world's environment once the jobs queue has room: binky run WORKTREE -- CMD [ARGS…]."`
	Reset    resetCmd        `cmd:"" help:"Put a world's slices back to the golden state."`
	Restart  restartCmd      `cmd:"" help:"Restart a world's services (the named ones, or all) in dependency order, waiting for each to be healthy."`
	Stop     stopCmd         `cmd:"" help:"Stop services of a world and keep them stopped: binky up leaves them so until binky start."`
	Start    startCmd        `cmd:"" help:"Start services binky stop stopped, waiting for each to be healthy."`
	Golden   goldenCmd       `cmd:"" help:"List, rebuild or drop golden templates (golden list, golden drop NAME|--project P)."`
	Reserve  reserveCmd      `cmd:"" help:"Show or set the admission bounds: free RAM and disk kept in reserve, and max_parallel."`
	Trust    handoffTrust    `cmd:"" help:"Install Binky's local CA into the system and browser trust stores (--uninstall removes it)."`
	Adapters handoffAdapters `cmd:"" help:"List the adapters found on PATH, in $BINKY_HOME/adapters and in the system adapter directory: name, aliases, version, tiers, clone, protocol, where each came from, binary."`
	Adapter  handoffAdapter  `cmd:"" help:"Act on one adapter (adapter test NAME runs the conformance suite)."`
	Hook     hookCmd         `cmd:"" help:"Plug into agent tools: hook claude create|remove, hook up|down, hook install claude|worktrunk (docs/agents.md)."`
	Mcp      handoffMcp      `cmd:"" name:"mcp" help:"Serve the Model Context Protocol over stdio (tools up, down, status, env, ports, verify, run, logs, reset, restart, stop, start; world env and log resources)."`

	HostCmd hostCmd   `cmd:"" name:"host" help:"Manage the machines --host drives over ssh: host add|list|check|remove (docs/remote.md)."`
	System  systemCmd `cmd:"" help:"The host's side of --host: system dial-stdio, system exec."`

	Completion completionCmd `cmd:"" help:"Print a shell completion script: binky completion bash|zsh|fish (completes verbs, flags, and live worktree and service names)."`
	Complete   completeCmd   `cmd:"" name:"__complete" hidden:"" help:"Complete a command line (called by the completion scripts)."`
	Man        manCmd        `cmd:"" name:"__man" hidden:"" help:"Write the manual pages binky.1 and binky.toml.5 (make man)."`
}

// globals is handed to every verb's Run.
type globals struct {
	ctx  context.Context
	home string
	// host is --host (or BINKY_HOST) for the verbs that act here and on a
	// host both (hook); the others run on the host whole (remote.go).
	host string
}

// exitError carries an exit status through kong back to main.
type exitError = cli.ExitError

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if code, ok := remoteRun(args); ok {
		return code // remote.go: --host, and system exec on the host
	}
	if handedOff(args) {
		return handOff(args)
	}
	if c, ok := parseFast(args, os.Getenv); ok {
		return runFast(c) // fast.go: the hot verbs without kong
	}
	return runKong(args)
}

// runKong parses args with the whole grammar and runs the verb.
func runKong(args []string) int {
	var c grammar
	return cli.Main(args, &c, &c.Home, func(ctx context.Context, home string) any {
		return &globals{ctx: ctx, home: home, host: c.Host}
	})
}
