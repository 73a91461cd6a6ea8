package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/binkyhq/binky/host/api"
)

type statusCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c *statusCmd) Run(g *globals) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	var res api.StatusResult
	if err := cl.Call(g.ctx, api.OpStatus, api.StatusArgs{WorldRef: api.WorldRef{Env: callerEnv()}}, api.Handlers{}, &res); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("status: %w", err)}
	}
	if res.Worlds == nil {
		res.Worlds = []api.World{}
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if len(res.Worlds) == 0 {
		fmt.Println("no worlds yet: `binky up <branch>` in a repository with a binky.toml")
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	project, repo := "", ""
	for i, w := range res.Worlds {
		if w.Project != project || w.Repo != repo {
			if i > 0 {
				fmt.Fprintln(tw)
			}
			project, repo = w.Project, w.Repo
			if repo != "" {
				fmt.Fprintf(tw, "%s\t(%s)\n", w.Project, repo)
			} else {
				fmt.Fprintf(tw, "%s\n", w.Project)
			}
		}
		verify := ""
		if v := w.Verify; v != nil {
			verdict := "passed"
			if !v.Passed {
				verdict = "FAILED"
			}
			stale := ""
			if v.Stale {
				stale = ", stale"
			}
			verify = fmt.Sprintf("  verify %s at %s%s, %s", verdict, shortCommit(v.Commit), stale, since(v.At))
		}
		fmt.Fprintf(tw, "  %s\t%s\tports %d-%d\t(%s)%s\n", w.Worktree, w.State, w.Ports[0], w.Ports[1], w.Branch, verify)
		for _, s := range w.Services {
			pid, port := "-", "-"
			if s.Pid > 0 {
				pid = strconv.Itoa(s.Pid)
			}
			if s.Port > 0 {
				port = strconv.Itoa(s.Port)
			}
			where := s.URL
			if where == "" {
				where = s.Address
			}
			extra := ""
			if s.Error != "" {
				extra = "  " + s.Error
			}
			fmt.Fprintf(tw, "    %s\t%s\tpid %s\tport %s\t%s%s\n", s.Name, s.State, pid, port, where, extra)
		}
	}
	return tw.Flush()
}
