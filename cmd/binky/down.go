package main

import (
	"fmt"
	"os"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type downCmd struct {
	Worktree string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project  string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet    bool   `short:"q" help:"No live progress."`
}

func (c *downCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := newProgress(c.Quiet)
	start := time.Now()
	var w api.World
	err = cl.Call(g.ctx, api.OpDown, api.DownArgs{WorldRef: cli.WorldRef(c.Worktree, c.Project)}, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("down: %w", err)}
	}
	fmt.Printf("%s/%s is down in %.1fs (files, ports and slices kept; `binky up %s` starts it again)\n", w.Project, w.Worktree, time.Since(start).Seconds(), w.Branch)
	return nil
}

type removeCmd struct {
	Worktree string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project  string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Force    bool   `help:"Remove even with uncommitted changes (they are lost)."`
	Tree     bool   `name:"worktree" help:"Also remove a worktree binky did not make (one Claude Code, worktrunk or git worktree add made); one binky made always goes with its world."`
	Quiet    bool   `short:"q" help:"No live progress."`
}

func (c *removeCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := newProgress(c.Quiet)
	start := time.Now()
	var w api.World
	err = cl.Call(g.ctx, api.OpRemove, api.RemoveArgs{WorldRef: cli.WorldRef(c.Worktree, c.Project), Force: c.Force, RemoveWorktree: c.Tree}, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("remove: %w", err)}
	}
	what := "worktree, slices, ports and logs"
	if _, err := os.Stat(w.Path); err == nil && w.Path != w.Repo {
		what = "slices, ports and logs; the worktree at " + w.Path + " stays: binky did not make it, --worktree removes it too"
	}
	fmt.Printf("%s/%s removed in %.1fs (%s)\n", w.Project, w.Worktree, time.Since(start).Seconds(), what)
	if len(w.Left) > 0 {
		fmt.Fprintf(os.Stderr, "binky forgot %d thing(s) of the world it could not end or destroy; they are still where it says:\n", len(w.Left))
		for _, l := range w.Left {
			fmt.Fprintf(os.Stderr, "  %s\n", l)
		}
	}
	return nil
}
