package daemon

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/dashboard"
	"github.com/binkyhq/binky/host/events"
)

// dashboardHandler serves http://binky.localhost from the registry.
func (d *Daemon) dashboardHandler() http.Handler {
	return dashboard.New(dashSource{d}, dashboard.Options{Logger: d.log.Named("dashboard"), Redactor: d.redact})
}

// dashSource adapts the daemon's status to the dashboard's view.
type dashSource struct{ d *Daemon }

func (s dashSource) Worlds(ctx context.Context) ([]dashboard.World, error) {
	res, err := s.d.w.Status(ctx, api.StatusArgs{})
	if err != nil {
		return nil, err
	}
	var out []dashboard.World
	for _, w := range res.Worlds {
		dw := dashboard.World{Project: w.Project, Worktree: w.Worktree, Path: w.Path, State: w.State, Reason: w.Reason, Cost: w.Cost}
		if w.Branch != w.Worktree {
			dw.Branch = w.Branch
		}
		for _, sv := range w.Services {
			ds := dashboard.Service{Name: sv.Name, Kind: sv.Kind, Adapter: sv.Adapter, State: sv.State, Port: sv.Port, URL: sv.URL, Detail: sv.Error, Reason: sv.Reason, Warning: sv.Warning, LogTail: sv.LogTail}
			if sv.Kind == "adapter" || ds.Detail == sv.Reason || strings.HasSuffix(sv.Reason, ds.Detail) {
				ds.Detail = sv.Address // the error is in the reason already
			}
			dw.Services = append(dw.Services, ds)
		}
		if v := w.Verify; v != nil {
			sum := fmt.Sprintf("at %s", shortSHA(v.Commit))
			for _, c := range v.Checks {
				if !c.Passed {
					sum = fmt.Sprintf("%q failed (exit %d) at %s", c.Cmd, c.ExitCode, shortSHA(v.Commit))
					break
				}
			}
			if v.Stale {
				sum += ", stale"
			}
			dw.Verify = &dashboard.Verify{Passed: v.Passed, At: v.At, Summary: sum}
		}
		out = append(out, dw)
	}
	return out, nil
}

func (s dashSource) RecentEvents(ctx context.Context, n int) ([]dashboard.Event, error) {
	evs, err := events.Tail(filepath.Join(s.d.home, "events.log"), n)
	if err != nil {
		return nil, err
	}
	out := make([]dashboard.Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, dashboard.Event{Time: e.TS, Event: e.Event, Project: e.Project, Worktree: e.Worktree, Service: e.Service, Adapter: e.Adapter, Error: e.Error})
	}
	return out, nil
}

func shortSHA(c string) string {
	if len(c) > 8 {
		return c[:8]
	}
	return c
}
