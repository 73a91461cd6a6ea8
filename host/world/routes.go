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
// every recorded world, on the hostname its last up claimed (hostName for
// a world recorded before names were claimed), with its live state (the
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
		// The names its last up claimed: a template edited since is not
		// served until up claims its names (another world may hold
		// them). A world no up of this binky claimed names for has none.
		held, err := e.reg.Hosts(ctx, rec.ID)
		if err != nil {
			continue
		}
		claimed := make(map[string]string, len(held))
		for h, svc := range held {
			claimed[svc] = h
		}
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
			meets = e.wakeRoute(cfg, rec, sv, meets)
			host, ok := claimed[sv.Name]
			if !ok && len(held) > 0 {
				continue // its url came after the world's last up
			}
			if !ok {
				if host, err = e.hostName(cfg, rec, sv.Name); err != nil {
					e.log.Warn("route not added", "project", rec.Project, "worktree", rec.Name, "service", sv.Name, "error", err)
					continue
				}
			}
			routes = append(routes, proxy.Route{
				Host:    host,
				Target:  "127.0.0.1:" + strconv.Itoa(port),
				State:   meets,
				Project: rec.Project, Worktree: rec.Name, Service: sv.Name,
				BrowserLogs: cfg.Agents.BrowserLogs,
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
// hostname (hostName); a name the template cannot make (up refuses such a
// world) falls back to the default one.
func (e *Engine) hostOf(cfg *config.Config, rec *registry.Worktree) func(string) string {
	return func(svc string) string {
		h, err := e.hostName(cfg, rec, svc)
		if err != nil {
			return names.Host(cfg.Services[svc].URL, rec.Name, rec.Project)
		}
		return h
	}
}

// hostName is the proxied hostname of the url service svc of the recorded
// world rec: the service's host template, else the project's hostname
// template (names.DefaultHostTemplate when unset), under the project's
// apex, with the world's stable name in place of its worktree name when it
// was handed one. With neither template nor apex set it is
// names.Host(url, worktree, project), as it always was.
func (e *Engine) hostName(cfg *config.Config, rec *registry.Worktree, svc string) (string, error) {
	c := cfg.Services[svc]
	tmpl := cfg.Project.Hostname
	if c.Host != "" {
		tmpl = c.Host
	}
	wt := rec.Name
	if rec.StableName != "" {
		wt = rec.StableName
	}
	branch := rec.Branch
	if branch == "" {
		branch = rec.Name // a detached HEAD: {branch} is the world's own name
	}
	return names.HostFrom(tmpl, cfg.Project.Apex, names.HostVars{
		Service: c.URL, Worktree: wt, Branch: branch, Project: rec.Project, User: e.user,
	})
}
