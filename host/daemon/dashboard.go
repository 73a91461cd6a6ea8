package daemon

import (
	"context"
	"net/http"
	"path/filepath"

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
		out = append(out, dashboard.FromStatus(w))
	}
	// Other hosts' worlds reached from here, with what answers here.
	for _, w := range s.d.remoteWorldsHere(true) {
		out = append(out, dashboard.FromStatus(w))
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
