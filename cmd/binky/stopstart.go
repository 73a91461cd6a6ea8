package main

import (
	"fmt"
	"strings"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

// stopCmd is `binky stop [<worktree>] <service>…`: stop services of a
// world and keep them stopped across up, until binky start.
type stopCmd struct {
	Worktree string   `arg:"" optional:"" help:"Worktree name or branch (. for the worktree you stand in); inside a worktree, a service name alone works."`
	Services []string `arg:"" optional:"" help:"The services to stop."`
	Project  string   `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet    bool     `short:"q" help:"No live progress."`
}

func (c *stopCmd) Run(g *globals) error {
	w, err := callServices(g, api.OpStopService, c.Worktree, c.Services, c.Project, c.Quiet)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("stop: %w", err)}
	}
	fmt.Printf("%s/%s: %s stopped (binky up leaves it stopped; binky start starts it)\n", w.Project, w.Worktree, strings.Join(named(w, api.OpStopService), ", "))
	return nil
}

// startCmd is `binky start [<worktree>] <service>…`: start services
// binky stop stopped.
type startCmd struct {
	Worktree string   `arg:"" optional:"" help:"Worktree name or branch (. for the worktree you stand in); inside a worktree, a service name alone works."`
	Services []string `arg:"" optional:"" help:"The services to start."`
	Project  string   `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet    bool     `short:"q" help:"No live progress."`
}

func (c *startCmd) Run(g *globals) error {
	w, err := callServices(g, api.OpStartService, c.Worktree, c.Services, c.Project, c.Quiet)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("start: %w", err)}
	}
	fmt.Printf("%s/%s: %s running\n", w.Project, w.Worktree, strings.Join(named(w, api.OpStartService), ", "))
	return nil
}

// callServices calls op with the world and services as typed.
func callServices(g *globals, op, worktree string, services []string, project string, quiet bool) (*api.World, error) {
	cl, err := g.client()
	if err != nil {
		return nil, err
	}
	if worktree == "." {
		worktree = ""
	}
	pp := newProgress(quiet)
	var w api.World
	err = cl.Call(g.ctx, op, api.ServicesArgs{WorldRef: cli.WorldRef(worktree, project), Services: services}, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// named lists the services of w that op left as it wanted: stopped by
// binky stop, or running.
func named(w *api.World, op string) []string {
	var out []string
	for _, s := range w.Services {
		stopped := s.Reason == "stopped by binky stop"
		if (op == api.OpStopService) == stopped {
			out = append(out, s.Name)
		}
	}
	return out
}
