package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type verifyCmd struct {
	Worktree string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project  string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	JSON     bool   `help:"Print the recorded run as JSON (command output goes to stderr)."`
}

func (c *verifyCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	out := os.Stdout
	if c.JSON {
		out = os.Stderr
	}
	start := time.Now()
	var v api.Verify
	h := api.Handlers{
		Progress: func(p api.Progress) { fmt.Fprintf(os.Stderr, "==> %s\n", p.Message) },
		Output: func(o api.Output) {
			if o.Stream == "stderr" {
				fmt.Fprint(os.Stderr, o.Data)
			} else {
				fmt.Fprint(out, o.Data)
			}
		},
	}
	err = cl.Call(g.ctx, api.OpVerify, api.VerifyArgs{WorldRef: cli.WorldRef(c.Worktree, c.Project)}, h, &v)
	var ae *api.Error
	if errors.As(err, &ae) && len(ae.Detail) > 0 {
		json.Unmarshal(ae.Detail, &v)
	} else if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("verify: %w", err)}
	}
	if c.JSON {
		json.NewEncoder(os.Stdout).Encode(v)
	} else {
		for _, ch := range v.Checks {
			mark := "ok  "
			if !ch.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(os.Stderr, "%s %s (exit %d, %.1fs)\n", mark, ch.Cmd, ch.ExitCode, float64(ch.Duration)/1000)
		}
		verdict := "passed"
		if !v.Passed {
			verdict = "FAILED"
		}
		if v.BrowserErrors != nil {
			fmt.Fprintf(os.Stderr, "browser: %d error(s) reported by the pages since up%s\n", *v.BrowserErrors, browserHint(*v.BrowserErrors, c.Worktree))
		}
		fmt.Fprintf(os.Stderr, "verify %s at %s in %.1fs\n", verdict, commitLabel(v.Commit, v.Dirty), time.Since(start).Seconds())
	}
	if !v.Passed {
		return &exitError{Code: 1}
	}
	return nil
}

type resetCmd struct {
	Worktree string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project  string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Service  string `arg:"" optional:"" help:"One adapter service; default: all of them."`
	Quiet    bool   `short:"q" help:"No live progress."`
	// NoRestart keeps today's behaviour for apps that cope with a slice
	// replaced under them.
	NoRestart bool `name:"no-restart" help:"Leave the services that depend on the reset slices running (by default they are stopped before the reset and started again after it)."`
}

type restartCmd struct {
	Worktree string   `arg:"" optional:"" help:"Worktree name or branch; default (or .): the worktree you stand in, where a service name alone works too."`
	Services []string `arg:"" optional:"" help:"Services to restart; default: every cmd service of the world."`
	Project  string   `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Quiet    bool     `short:"q" help:"No live progress."`
}

func (c *restartCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	wt := c.Worktree
	if wt == "." {
		wt = ""
	}
	pp := newProgress(c.Quiet)
	start := time.Now()
	var w api.World
	err = cl.Call(g.ctx, api.OpRestart, api.RestartArgs{WorldRef: cli.WorldRef(wt, c.Project), Services: c.Services}, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("restart: %w", err)}
	}
	which := "every service"
	if len(c.Services) > 0 {
		which = strings.Join(c.Services, ", ")
	}
	fmt.Printf("%s/%s: %s restarted in %.1fs\n", w.Project, w.Worktree, which, time.Since(start).Seconds())
	return nil
}

func (c *resetCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := newProgress(c.Quiet)
	start := time.Now()
	var w api.World
	args := api.ResetArgs{WorldRef: cli.WorldRef(c.Worktree, c.Project), Service: c.Service, NoRestart: c.NoRestart}
	err = cl.Call(g.ctx, api.OpReset, args, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("reset: %w", err)}
	}
	fmt.Printf("%s/%s reset in %.1fs: %s\n", w.Project, w.Worktree, time.Since(start).Seconds(), api.ResetSummary(w, c.Service))
	return nil
}

// browserHint tells where to read the browser errors verify counted.
func browserHint(n int, wt string) string {
	if n == 0 {
		return ""
	}
	if wt == "" {
		return " (binky logs --browser)"
	}
	return " (binky logs " + wt + " --browser)"
}
