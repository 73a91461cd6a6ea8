package main

import (
	"fmt"
	"os"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

// runCmd is `binky run <worktree> -- <command> [args…]`: one command in a
// world's environment (as verify gives its checks), started once the jobs
// queue has a place for it (docs/admission.md).
type runCmd struct {
	Worktree string   `arg:"" optional:"" help:"Worktree name or branch; default (or .): the worktree you stand in (binky run -- make test)."`
	Argv     []string `arg:"" optional:"" passthrough:"" help:"The command and its arguments, after --."`
	Project  string   `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet    bool     `short:"q" help:"Do not report the place in the jobs queue."`
}

func (c *runCmd) Run(g *globals) error {
	wt, argv := runWorld(os.Args[1:], c.Worktree, c.Argv)
	if len(argv) == 0 {
		return &exitError{Code: 2, Err: fmt.Errorf("run: give the command after --: binky run %s -- make test", c.Worktree)}
	}
	cl, err := g.client()
	if err != nil {
		return err
	}
	h := api.Handlers{
		Progress: func(p api.Progress) {
			if !c.Quiet {
				fmt.Fprintf(os.Stderr, "binky: %s %s\n", p.Step, p.Message)
			}
		},
		Output: func(o api.Output) {
			if o.Stream == "stderr" {
				fmt.Fprint(os.Stderr, o.Data)
			} else {
				fmt.Fprint(os.Stdout, o.Data)
			}
		},
	}
	var res api.RunResult
	if err := cl.Call(g.ctx, api.OpRun, api.RunArgs{WorldRef: cli.WorldRef(wt, c.Project), Argv: argv}, h, &res); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("run: %w", err)}
	}
	switch {
	case res.ExitCode == 0:
		return nil
	case res.ExitCode < 0:
		return &exitError{Code: 1}
	default:
		return &exitError{Code: res.ExitCode}
	}
}

// runWorld splits what kong parsed into the world and the command. The
// world is optional: `binky run -- make test` runs in the world you stand
// in, but kong, which drops that first "--", hands "make" over as the
// worktree; raw (the command line) tells the two apart: a worktree typed
// after the first "--" is the command's first word.
func runWorld(raw []string, worktree string, argv []string) (string, []string) {
	if worktree != "" {
		for _, a := range raw {
			if a == "--" {
				return "", append([]string{worktree}, argv...)
			}
			if a == worktree {
				break
			}
		}
	}
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if worktree == "." {
		worktree = ""
	}
	return worktree, argv
}
