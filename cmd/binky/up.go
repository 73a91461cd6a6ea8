package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type upCmd struct {
	Branch string `arg:"" optional:"" help:"Branch (or worktree name) to bring up; default: the worktree you stand in."`
	JSON   bool   `help:"Print the world as JSON when done."`
	Quiet  bool   `short:"q" help:"No live progress."`
	NoWait bool   `name:"no-wait" help:"Fail at once, with the reason, when the world cannot be admitted now (max_parallel, RAM or disk reserve) instead of waiting in the queue."`
}

func (c *upCmd) Run(g *globals) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	args := api.UpArgs{Dir: wd, Branch: c.Branch, Env: cli.CallerEnv(), NoWait: c.NoWait}
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
	if w.Noop {
		fmt.Printf("%s/%s is already up (nothing to do)\n", w.Project, w.Worktree)
	} else {
		fmt.Printf("%s/%s is up in %.1fs (%s, %s)\n", w.Project, w.Worktree, time.Since(start).Seconds(), portsLabel(w.Ports), w.Path)
	}
	for _, s := range w.Services {
		where := s.URL
		if where == "" {
			where = s.Address
		}
		fmt.Printf("  %-12s %-9s %s\n", s.Name, s.State, where)
	}
	return nil
}
