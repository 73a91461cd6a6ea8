package world

import (
	"context"
	"strconv"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/sdk/names"
)

// Routes is the proxy's table as the worlds make it: every url service of
// every recorded world, on its proxied hostname, with its live state (the
// daemon hands it to proxy.Set).
func (e *Engine) Routes(ctx context.Context) ([]proxy.Route, error) {
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	var routes []proxy.Route
	for _, rec := range recs {
		svcs, err := e.reg.Services(ctx, rec.ID)
		if err != nil {
			continue
		}
		cfg, cfgErr := e.Config(rec)
		for _, sv := range svcs {
			if sv.Kind != registry.KindCmd || sv.URL == "" || cfgErr != nil {
				continue
			}
			c, ok := cfg.Services[sv.Name]
			if !ok || c.URL == "" {
				continue
			}
			port := sv.Ports[c.PortNames()[0]]
			meets := proxy.StateDown
			if st, ok := e.ServiceState(rec.Project, rec.Name, sv.Name); ok {
				meets = routeState(st)
			}
			if rec.State == state.WorldSuspended {
				meets = proxy.StateSuspended
			}
			routes = append(routes, proxy.Route{
				Host:    names.Host(c.URL, rec.Name, rec.Project),
				Target:  "127.0.0.1:" + strconv.Itoa(port),
				State:   meets,
				Project: rec.Project, Worktree: rec.Name, Service: sv.Name,
			})
		}
	}
	return routes, nil
}

// routeState is what a request to a service in state s meets.
func routeState(s state.Service) proxy.RouteState {
	switch s {
	case state.ServiceRunning:
		return proxy.StateRunning
	case state.ServiceStarting:
		return proxy.StateStarting
	case state.ServiceBackoff, state.ServiceUnhealthy:
		return proxy.StateRestarting
	case state.ServiceFailed, state.ServiceLost:
		return proxy.StateFailed
	}
	return proxy.StateDown
}

// hostOf maps a service of the recorded world rec onto its proxied
// hostname.
func (e *Engine) hostOf(cfg *config.Config, rec *registry.Worktree) func(string) string {
	return func(svc string) string {
		return names.Host(cfg.Services[svc].URL, rec.Name, rec.Project)
	}
}
