package main

import (
	"fmt"
	"os"
	"time"

	"github.com/binkyhq/binky/host/api"
)

type downCmd struct {
	Worktree string `arg:"" help:"Worktree name or branch."`
	Quiet    bool   `short:"q" help:"No live progress."`
}

func (c *downCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := &progressPrinter{w: os.Stderr, quiet: c.Quiet}
	start := time.Now()
	var w api.World
	if err := cl.Call(g.ctx, api.OpDown, api.DownArgs{WorldRef: refFromArg(c.Worktree)}, api.Handlers{Progress: pp.show}, &w); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("down: %w", err)}
	}
	fmt.Printf("%s/%s is down in %.1fs (files, ports and slices kept; `binky up %s` starts it again)\n", w.Project, w.Worktree, time.Since(start).Seconds(), w.Branch)
	return nil
}

type removeCmd struct {
	Worktree string `arg:"" help:"Worktree name or branch."`
	Force    bool   `help:"Remove even with uncommitted changes (they are lost)."`
	Quiet    bool   `short:"q" help:"No live progress."`
}

func (c *removeCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := &progressPrinter{w: os.Stderr, quiet: c.Quiet}
	start := time.Now()
	var w api.World
	if err := cl.Call(g.ctx, api.OpRemove, api.RemoveArgs{WorldRef: refFromArg(c.Worktree), Force: c.Force}, api.Handlers{Progress: pp.show}, &w); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("remove: %w", err)}
	}
	fmt.Printf("%s/%s removed in %.1fs (worktree, slices, ports and logs)\n", w.Project, w.Worktree, time.Since(start).Seconds())
	return nil
}
