package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/binkyhq/binky/host/api"
)

// reserveCmd shows or sets the admission bounds (docs/admission.md).
type reserveCmd struct {
	RAM         *float64 `name:"ram" placeholder:"PCT" help:"Percent of RAM to keep free: no world is admitted below it, and the newest is suspended when a running swarm crosses it (0: none)."`
	Disk        *float64 `name:"disk" placeholder:"GB" help:"GB of free disk to keep in BINKY_HOME's filesystem (0: none)."`
	MaxParallel *int     `name:"max-parallel" placeholder:"N" help:"Most worlds running at once, up, starting or suspended (0: no bound)."`
	JSON        bool     `help:"Print JSON."`
}

func (c *reserveCmd) Run(g *globals) error {
	wd, _ := os.Getwd()
	cl, err := g.client()
	if err != nil {
		return err
	}
	var res api.ReserveResult
	args := api.ReserveArgs{RAM: c.RAM, Disk: c.Disk, MaxParallel: c.MaxParallel, Dir: wd}
	if err := cl.Call(g.ctx, api.OpReserve, args, api.Handlers{}, &res); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("reserve: %w", err)}
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, v := range res.Values {
		val := fmtNum(v.Value) + v.Unit
		if v.Value == 0 {
			val = "none"
		}
		if v.Unit == "GB" && v.Value != 0 {
			val = fmtNum(v.Value) + " GB"
		}
		fmt.Printf("%-14s %-8s from %s\n", v.Name, val, v.Source)
		if v.ProjectFile != "" {
			fmt.Printf("%-14s %-8s this project asks for %s in %s (a project can only tighten)\n", "", "", fmtNum(v.Project)+v.Unit, v.ProjectFile)
		}
	}
	printPressure(os.Stdout, &res.Pressure)
	return nil
}

// printPressure writes free RAM and disk against the reserves, and how many
// worlds run and wait: the line status and reserve end with.
func printPressure(w io.Writer, p *api.Pressure) {
	if p == nil {
		return
	}
	ram, disk := "unknown", "unknown"
	if p.RAMFreePct >= 0 {
		ram = fmtNum(float64(int(p.RAMFreePct))) + "%"
	}
	if p.DiskFreeGB >= 0 {
		disk = strconv.FormatFloat(p.DiskFreeGB, 'f', 1, 64) + " GB"
	}
	limit := "no bound"
	if p.MaxParallel > 0 {
		limit = "max " + strconv.Itoa(p.MaxParallel)
	}
	jobs := ""
	if p.Jobs > 0 {
		jobs = fmt.Sprintf(" · jobs %d/%d running, %d queued", p.JobsRunning, p.Jobs, p.JobsQueued)
	}
	fmt.Fprintf(w, "free RAM %s (reserve %s%%) · free disk %s (headroom %s GB) · %d running (%s), %d queued%s\n",
		ram, fmtNum(p.RAMReserve), disk, fmtNum(p.DiskHeadroom), p.Running, limit, p.Queued, jobs)
}

// queueLabel is a queued world's place and reason, "" for any other.
func queueLabel(w api.World) string {
	if w.Queue == nil {
		return ""
	}
	return fmt.Sprintf("queued #%d: %s", w.Queue.Position, w.Queue.Reason)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
