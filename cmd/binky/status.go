package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type statusCmd struct {
	JSON bool `help:"Print JSON."`
}

func (c *statusCmd) Run(g *globals) error {
	// Every world: the daemon needs no caller's environment for that. The
	// table asks for what it prints (api.StatusArgs.Table) and decodes it
	// by hand (api.StatusTable); --json asks for, and prints, everything.
	args := api.StatusArgs{Table: !c.JSON}
	var all api.StatusResult
	var table api.StatusTable
	dst := any(&all)
	if !c.JSON {
		dst = &table
	}
	if err := cli.Ask(g.ctx, g.home, func(cl *api.Client) error {
		all, table = api.StatusResult{}, api.StatusTable{}
		if err := cl.Call(g.ctx, api.OpStatus, args, api.Handlers{}, dst); err != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("status: %w", err)}
		}
		return nil
	}); err != nil {
		return err
	}
	res := all
	if !c.JSON {
		res = table.StatusResult
	}
	if res.Worlds == nil {
		res.Worlds = []api.World{}
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	// Buffered: tabwriter writes cell by cell, a system call each on a
	// bare os.Stdout (thousands for 50 worlds).
	out := bufio.NewWriter(os.Stdout)
	if err := printStatus(out, res, styleFor(os.Stdout, os.Getenv)); err != nil {
		return err
	}
	return out.Flush()
}

// printStatus writes the status table: worlds grouped by project, each
// service under its world, and the last log lines of a failed service.
// Colours are escape codes tabwriter counts as text; every cell of a
// coloured column carries the same codes, so the columns still line up.
func printStatus(out io.Writer, res api.StatusResult, st style) error {
	if dg := res.Degraded; dg != nil {
		// The daemon's home takes no new data: first, whatever follows.
		fmt.Fprintf(out, "%s %s (since %s)\n\n", st.paint(ansiRed, "degraded:"), dg.Reason, dg.Since.Local().Format("15:04:05"))
	}
	// Other hosts' worlds reached from here come last, marked remote.
	worlds := append(append([]api.World(nil), res.Worlds...), res.Remote...)
	if len(worlds) == 0 {
		fmt.Fprintln(out, "no worlds yet: `binky up <branch>` in a repository with a binky.toml")
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	project, repo, host := "", "", ""
	for i, w := range worlds {
		if w.Project != project || w.Repo != repo || w.Host != host {
			if i > 0 {
				fmt.Fprintln(tw)
			}
			project, repo, host = w.Project, w.Repo, w.Host
			if host != "" {
				// Another machine's world, reached from here (docs/remote.md).
				fmt.Fprintf(tw, "%s\t(remote: on host %s; binky --host %s status says more)\n", st.paint(ansiBold, w.Project), host, host)
			} else if repo != "" {
				fmt.Fprintf(tw, "%s\t(%s)\n", st.paint(ansiBold, w.Project), repo)
			} else {
				fmt.Fprintf(tw, "%s\n", st.paint(ansiBold, w.Project))
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
			verify = fmt.Sprintf("  verify %s at %s%s, %s", st.paint(verdictColor(v.Passed), verdict), commitLabel(v.Commit, v.Dirty), stale, since(v.At))
		}
		if q := queueLabel(w); q != "" {
			verify += "  " + q // admission: place and reason (reserve.go)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t(%s)%s\n", w.Worktree, st.paint(worldColor(w.State), string(w.State)), portsLabel(w.Ports), w.Branch, verify)
		if w.Reason != "" {
			fmt.Fprintf(tw, "    why: %s\n", st.paint(worldColor(w.State), w.Reason))
		}
		if w.StableName != "" {
			fmt.Fprintf(tw, "    stable name: %s (kept until binky remove %s)\n", w.StableName, w.Worktree)
		}
		if w.Selection != "" {
			fmt.Fprintf(tw, "    runs: %s (binky up %s --all runs every service)\n", w.Selection, w.Worktree)
		}
		var tails []api.Service
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
			if s.Clone != "" {
				extra = "  cloned: " + s.Clone
			}
			switch {
			case s.Reason == api.ReasonWaits:
				extra = "  " + st.paint(ansiDim, s.Reason) // not a fault
			case s.Reason != "":
				extra = "  " + st.paint(ansiRed, s.Reason)
			case s.Error != "":
				extra = "  " + st.paint(ansiRed, s.Error)
			}
			if s.Warning != "" {
				extra += "  " + st.paint(ansiYellow, "warning: "+s.Warning)
			}
			if s.LeftOut != "" {
				extra = "  " + st.paint(ansiDim, "left out: "+s.LeftOut)
			}
			fmt.Fprintf(tw, "    %s\t%s\tpid %s\tport %s\t%s%s\n", s.Name, st.paint(serviceColor(s.State), string(s.State)), pid, port, where, extra)
			if len(s.LogTail) > 0 {
				tails = append(tails, s)
			}
		}
		if len(tails) > 0 {
			// Log lines are not table rows: flush the table first.
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range tails {
				fmt.Fprintf(out, "    %s, last log lines (binky logs %s %s):\n", s.Name, w.Worktree, s.Name)
				for _, l := range s.LogTail {
					fmt.Fprintf(out, "      %s\n", st.paint(ansiDim, l))
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printPressure(out, res.Pressure) // reserve.go
	if px := res.Proxy; px != nil && px.Note != "" {
		fmt.Fprintf(out, "\nproxy on port %d, not the usual one: %s\n  URLs above carry port %d (dashboard %s)\n", px.Port, px.Note, px.Port, px.URL)
	}
	return nil
}

// verdictColor is the colour of a verify verdict.
func verdictColor(passed bool) string {
	if passed {
		return ansiGreen
	}
	return ansiRed
}
