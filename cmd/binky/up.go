package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
)

type upCmd struct {
	Branch string `arg:"" optional:"" help:"Branch (or worktree name) to bring up; default: the worktree you stand in."`
	JSON   bool   `help:"Print the world as JSON when done."`
	Quiet  bool   `short:"q" help:"No live progress."`
	NoWait bool   `name:"no-wait" help:"Fail at once, with the reason, when the world cannot be admitted now (max_parallel, RAM or disk reserve) instead of waiting in the queue."`
	DryRun bool   `name:"dry-run" help:"Print what up would start, restart, stop, provision and keep in an existing world (with why), and change nothing."`
	Prune  bool   `help:"Destroy the slices of adapter services removed from binky.toml (kept until remove otherwise)."`
	// The world's selection of services (docs/config.md "[profiles.<name>]").
	Profile string   `xor:"select" placeholder:"NAME" help:"Run only the services of [profiles.NAME] in binky.toml, and what they need; recorded with the world."`
	Only    []string `xor:"select" sep:"," placeholder:"SVC,..." help:"Run only these services, and what they need; recorded with the world."`
	Except  []string `xor:"select" sep:"," placeholder:"SVC,..." help:"Run every service but these; recorded with the world."`
	All     bool     `xor:"select" help:"Run every service again (a world keeps its --profile, --only or --except otherwise)."`
	// NewBranch: a name that is an existing world's name means that world.
	NewBranch bool `name:"new-branch" help:"Make BRANCH a new branch even when it is the name of an existing world (up feat-c otherwise brings up the world of feat/c)."`
}

func (c *upCmd) Run(g *globals) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	args := api.UpArgs{Dir: wd, Branch: c.Branch, Env: cli.CallerEnv(), NoWait: c.NoWait, DryRun: c.DryRun, Prune: c.Prune, NewBranch: c.NewBranch,
		Profile: c.Profile, Only: c.Only, Except: c.Except, All: c.All}
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := newProgress(c.Quiet || c.JSON)
	start := time.Now()
	var w api.World
	err = cl.Call(g.ctx, api.OpUp, args, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("up: %w", err)}
	}
	if c.JSON {
		return json.NewEncoder(os.Stdout).Encode(w)
	}
	if c.DryRun {
		switch {
		case w.State == state.WorldAbsent:
			fmt.Printf("%s/%s does not exist yet: up would create its worktree, slices and services\n", w.Project, w.Worktree)
		case w.Plan == nil || len(w.Plan.Lines()) == 0 || w.Noop:
			fmt.Printf("%s/%s: nothing to do\n", w.Project, w.Worktree)
			if w.Plan != nil {
				for _, st := range w.Plan.Skip {
					fmt.Printf("  skip      %s: %s\n", st.Service, st.Why)
				}
				for _, st := range w.Plan.Wait {
					fmt.Printf("  wait      %s: %s\n", st.Service, st.Why)
				}
			}
		default:
			fmt.Printf("%s/%s: up would\n", w.Project, w.Worktree)
			for _, l := range w.Plan.Lines() {
				fmt.Printf("  %s\n", l)
			}
		}
		return nil
	}
	if w.Noop {
		fmt.Printf("%s/%s is already up (nothing to do)\n", w.Project, w.Worktree)
	} else {
		fmt.Printf("%s/%s is up in %.1fs (%s, %s)\n", w.Project, w.Worktree, time.Since(start).Seconds(), portsLabel(w.Ports), w.Path)
		if w.Plan != nil {
			for _, l := range w.Plan.Lines() {
				fmt.Printf("  did: %s\n", l)
			}
		}
	}
	for _, s := range w.Services {
		where := s.URL
		if where == "" {
			where = s.Address
		}
		switch {
		case s.LeftOut != "":
			where = "left out: " + s.LeftOut
		case s.Reason != "":
			// Why it is not simply running: waiting for its first
			// request, in backoff with the exit, unhealthy with the probe.
			where = strings.TrimSpace(where + "  " + s.Reason)
		}
		fmt.Printf("  %-12s %-9s %s\n", s.Name, s.State, where)
	}
	return nil
}
