// Command binky gives every git worktree of a repository its own running
// world. main wires the kong CLI; each verb lives in its own file with a Run
// method and calls into host/.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

// cli is the whole command line. Only verbs that really work are listed.
type cli struct {
	Version kong.VersionFlag `help:"Print the version, commit and Go version, then exit."`
	Home    string           `name:"home" env:"BINKY_HOME" help:"State directory (default ~/.binky)." placeholder:"DIR"`

	Check    checkCmd    `cmd:"" help:"Validate binky.toml and flag footguns."`
	Init     initCmd     `cmd:"" help:"Write a first binky.toml from the docker-compose project here (never copying a secret)."`
	Doctor   doctorCmd   `cmd:"" help:"Check this machine and Binky's state; exits non-zero when something is wrong."`
	Up       upCmd       `cmd:"" help:"Bring a branch's world up (creating its worktree when needed)."`
	Down     downCmd     `cmd:"" help:"Stop a world's processes; files, ports and slices stay."`
	Remove   removeCmd   `cmd:"" help:"Destroy a world: processes, slices, ports, logs and its worktree."`
	Status   statusCmd   `cmd:"" help:"Every world on the machine, grouped by project."`
	Env      envCmd      `cmd:"" help:"A world's exposed coordinates (the [agents] expose set)."`
	Logs     logsCmd     `cmd:"" help:"A world's service logs."`
	Daemon   daemonCmd   `cmd:"" help:"Start, stop or inspect the daemon."`
	Verify   verifyCmd   `cmd:"" help:"Run a world's [agents] verify commands and record the result."`
	Reset    resetCmd    `cmd:"" help:"Put a world's slices back to the golden state."`
	Golden   goldenCmd   `cmd:"" help:"List, rebuild or drop golden templates (golden list, golden drop NAME|--project P)."`
	Reserve  reserveCmd  `cmd:"" help:"Show or set the admission bounds: free RAM and disk kept in reserve, and max_parallel."`
	Trust    trustCmd    `cmd:"" help:"Install Binky's local CA into the system and browser trust stores (--uninstall removes it)."`
	Adapters adaptersCmd `cmd:"" help:"List the adapters found on PATH and in $BINKY_HOME/adapters: name, aliases, tiers, clone, protocol, binary."`
	Adapter  adapterCmd  `cmd:"" help:"Act on one adapter (adapter test NAME runs the conformance suite)."`
	Mcp      mcpCmd      `cmd:"" name:"mcp" help:"Serve the Model Context Protocol over stdio (tools up, down, status, env, verify, logs, reset)."`

	Completion completionCmd `cmd:"" help:"Print a shell completion script: binky completion bash|zsh|fish (completes verbs, flags, and live worktree and service names)."`
	Complete   completeCmd   `cmd:"" name:"__complete" hidden:"" help:"Complete a command line (called by the completion scripts)."`
}

// globals is handed to every verb's Run.
type globals struct {
	ctx  context.Context
	home string
}

// exitError carries an exit status through kong back to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var c cli
	parser, err := kong.New(&c,
		kong.Name("binky"),
		kong.Description("Give every git worktree its own running world."),
		kong.UsageOnError(),
		kong.Vars{"version": versionString()},
		kong.Exit(func(code int) { panic(exitPanic(code)) }),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return 2
	}
	code := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				if p, ok := r.(exitPanic); ok {
					code = int(p)
					return
				}
				panic(r)
			}
		}()
		if len(args) == 0 {
			args = []string{"--help"}
		}
		kctx, perr := parser.Parse(args)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "binky:", perr)
			code = 2
			return
		}
		g := &globals{ctx: ctx, home: homeDir(c.Home)}
		if rerr := kctx.Run(g); rerr != nil {
			var ee *exitError
			if errors.As(rerr, &ee) {
				if ee.err != nil {
					fmt.Fprintln(os.Stderr, "binky:", ee.err)
				}
				code = ee.code
				return
			}
			fmt.Fprintln(os.Stderr, "binky:", rerr)
			code = 1
		}
	}()
	return code
}

// exitPanic lets kong's exit (after --help or --version) unwind to run.
type exitPanic int

// homeDir is $BINKY_HOME, else ~/.binky.
func homeDir(flag string) string {
	if flag != "" {
		return flag
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ".binky"
	}
	return h + string(os.PathSeparator) + ".binky"
}
