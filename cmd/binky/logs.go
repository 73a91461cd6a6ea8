package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/supervisor"
)

type logsCmd struct {
	Worktree string `arg:"" help:"Worktree name or branch."`
	Service  string `arg:"" optional:"" help:"One service; default: all of the world's services."`
	Follow   bool   `short:"f" help:"Keep printing new lines, across log rolls."`
	Lines    int    `short:"n" default:"100" help:"How many past lines to print (0: all kept)."`
}

func (c *logsCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	var res api.StatusResult
	if err := cl.Call(g.ctx, api.OpStatus, api.StatusArgs{WorldRef: refFromArg(c.Worktree)}, api.Handlers{}, &res); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("logs: %w", err)}
	}
	w := res.Worlds[0]
	dir := filepath.Join(g.home, "logs", w.Project, w.Worktree)
	var services []string
	if c.Service != "" {
		found := false
		for _, s := range w.Services {
			found = found || s.Name == c.Service
		}
		if !found {
			var have []string
			for _, s := range w.Services {
				have = append(have, s.Name)
			}
			return &exitError{code: 1, err: fmt.Errorf("logs: %s/%s has no service %q (it has: %s)", w.Project, w.Worktree, c.Service, strings.Join(have, ", "))}
		}
		services = []string{c.Service}
	} else {
		for _, s := range w.Services {
			services = append(services, s.Name)
		}
		sort.Strings(services)
	}
	prefix := len(services) > 1
	var mu sync.Mutex
	print := func(svc, line string) error {
		mu.Lock()
		defer mu.Unlock()
		if prefix {
			_, err := fmt.Printf("%s | %s\n", svc, line)
			return err
		}
		_, err := fmt.Println(line)
		return err
	}
	if !c.Follow {
		for _, svc := range services {
			lines, err := supervisor.ReadLogs(filepath.Join(dir, svc+".log"), c.Lines)
			if err != nil {
				return err
			}
			for _, l := range lines {
				print(svc, l)
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(services))
	for i, svc := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = supervisor.Follow(ctx, filepath.Join(dir, svc+".log"), c.Lines, func(l string) error { return print(svc, l) })
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && g.ctx.Err() == nil {
		return err
	}
	return nil
}
