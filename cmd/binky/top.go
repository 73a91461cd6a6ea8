package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
)

type topCmd struct {
	Once     bool          `help:"Print one reading and exit (for scripts)."`
	JSON     bool          `help:"Print JSON: one object per reading, one a line."`
	Interval time.Duration `default:"2s" help:"Time between readings."`
}

// topRow is one world of a reading, as --json prints it.
type topRow struct {
	Project  string    `json:"project"`
	Worktree string    `json:"worktree"`
	State    string    `json:"state"`
	Cost     *api.Cost `json:"cost"`
}

// topReading is what --json prints per reading: the worlds, the most
// memory first.
type topReading struct {
	At     time.Time `json:"at"`
	Worlds []topRow  `json:"worlds"`
}

// Run shows every world's cost, the most memory first, read again every
// interval until interrupted. A terminal is redrawn in place; anything
// else gets the readings one after another. --once takes two readings a
// second apart (the CPU percentage is the use between two) and prints the
// second.
func (c *topCmd) Run(g *globals) error {
	if c.Interval <= 0 {
		return &exitError{Code: 2, Err: fmt.Errorf("top: --interval must be positive; got %s", c.Interval)}
	}
	tty := !c.JSON && isTerminal(os.Stdout)
	for i := 0; ; i++ {
		r, err := topRead(g.ctx, g.home)
		if err != nil {
			return err
		}
		if c.Once && i == 0 {
			if err := sleepCtx(g.ctx, time.Second); err != nil {
				return nil
			}
			continue
		}
		out := bufio.NewWriter(os.Stdout)
		switch {
		case c.JSON:
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s\n", b)
		default:
			if tty {
				fmt.Fprint(out, "\x1b[H\x1b[2J") // home, clear
			} else if i > 0 {
				fmt.Fprintln(out)
			}
			printTop(out, r)
		}
		if err := out.Flush(); err != nil || c.Once {
			return err
		}
		if err := sleepCtx(g.ctx, c.Interval); err != nil {
			return nil // interrupted: done
		}
	}
}

// topRead asks the daemon for a status and orders its worlds by memory.
func topRead(ctx context.Context, home string) (topReading, error) {
	var res api.StatusResult
	args := api.StatusArgs{WorldRef: api.WorldRef{Env: cli.CallerEnv()}}
	if err := cli.Ask(ctx, home, func(cl *api.Client) error {
		res = api.StatusResult{}
		if err := cl.Call(ctx, api.OpStatus, args, api.Handlers{}, &res); err != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("top: %w", err)}
		}
		return nil
	}); err != nil {
		return topReading{}, err
	}
	r := topReading{At: time.Now().UTC(), Worlds: []topRow{}}
	for _, w := range res.Worlds {
		cost := w.Cost
		if cost == nil {
			cost = &api.Cost{Source: "unavailable", CPUPercent: -1}
		}
		r.Worlds = append(r.Worlds, topRow{Project: w.Project, Worktree: w.Worktree, State: string(w.State), Cost: cost})
	}
	sort.SliceStable(r.Worlds, func(i, j int) bool { return memoryOf(r.Worlds[i].Cost) > memoryOf(r.Worlds[j].Cost) })
	return r, nil
}

// memoryOf is what top sorts by: the cgroup's charged memory where there
// is one, else the processes' resident memory.
func memoryOf(c *api.Cost) int64 { return max(c.Memory, c.RSS) }

// printTop writes a reading as a table.
func printTop(out io.Writer, r topReading) {
	if len(r.Worlds) == 0 {
		fmt.Fprintln(out, "no worlds yet: `binky up <branch>` in a repository with a binky.toml")
		return
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORLD\tSTATE\tPROCS\tMEMORY\tCPU\tDISK\tSLICES")
	for _, w := range r.Worlds {
		c := w.Cost
		cpu := "-"
		if c.CPUPercent >= 0 {
			cpu = fmt.Sprintf("%.1f%%", c.CPUPercent)
		}
		disk := "…" // measuring in the background
		if d := c.Disk; d != nil {
			disk = fmtBytes(d.Untracked + d.Ignored)
			if d.Partial {
				disk = "≥" + disk
			}
			disk += fmt.Sprintf(" (%s ago)", fmtAge(d.AgeSeconds))
		}
		slices := "-"
		if len(c.Slices) > 0 {
			slices = fmtBytes(c.SliceBytes)
			for _, s := range c.Slices {
				if s.Approximate || s.Unsupported || s.Error != "" {
					slices = "~" + slices
					break
				}
			}
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%d\t%s\t%s\t%s\t%s\n", w.Project, w.Worktree, w.State, c.Processes, fmtBytes(memoryOf(c)), cpu, disk, slices)
	}
	_ = tw.Flush()
}

// fmtBytes writes n in binary units: 512B, 3.2KiB, 64.0MiB, 1.5GiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, u = f/unit, next
	}
	return fmt.Sprintf("%.1f%s", f, u)
}

// fmtAge writes an age in seconds as 5s, 3m or 2h.
func fmtAge(s float64) string {
	switch d := time.Duration(s * float64(time.Second)); {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
}

// sleepCtx waits d, or returns ctx's error when it ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
