package world

import (
	"context"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
)

// Exposed computes the expose set of a recorded world, with the direct
// address of each exposed service that listens on a port of its block.
func (e *Engine) Exposed(ctx context.Context, rec *registry.Worktree) (api.EnvResult, error) {
	res := api.EnvResult{Project: rec.Project, Worktree: rec.Name, StableName: rec.StableName}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return res, err
	}
	w, _, err := e.worldAsRecorded(ctx, cfg, rec)
	if err != nil {
		return res, err
	}
	plan := w.plan
	res.Env, res.Order = w.exposed(w.coords())
	e.leaveOutNotRunning(ctx, cfg, rec, &res)
	for _, name := range res.Order {
		if _, running := res.Env[name]; !running {
			continue
		}
		if _, waits := res.Waiting[name]; waits {
			continue // nothing listens on its port before its first request
		}
		if svc, ok := cfg.Services[name]; ok && !svc.IsAdapter() {
			if p := firstPort(cfg, name, plan); p > 0 {
				if res.Direct == nil {
					res.Direct = map[string]string{}
				}
				res.Direct[name] = "http://127.0.0.1:" + strconv.Itoa(p)
			}
		}
	}
	return res, nil
}

// leaveOutNotRunning takes out of res.Env each exposed service that does
// not run while the world is up, naming it in res.NotRunning with why
// instead: one its selection leaves out, a cmd service whose process is
// not live (stopped by the user, ended). A wake service that waits for
// its first request keeps its proxied URL (a request to it starts it),
// named in res.Waiting. A world that is not up keeps every coordinate:
// they are fixed, and the CLI warns for the world.
func (e *Engine) leaveOutNotRunning(ctx context.Context, cfg *config.Config, rec *registry.Worktree, res *api.EnvResult) {
	sel := selectionOf(cfg, rec.Selection)
	serving := rec.State.Serving()
	for _, name := range res.Order {
		svc, ok := cfg.Services[name]
		if !ok {
			continue
		}
		why := ""
		switch {
		case !sel.in(name):
			why = sel.why
		case serving && !svc.IsAdapter():
			st, known := e.sup.State(e.SupKey(rec.Project, rec.Name, name))
			if svc.Wake && (!known || !st.State.Live()) {
				if sv, err := e.reg.Service(ctx, rec.ID, name); err == nil && e.waiting(cfg, rec, sv) {
					if res.Waiting == nil {
						res.Waiting = map[string]string{}
					}
					res.Waiting[name] = WaitsForRequest
					continue
				}
			}
			switch {
			case !known:
				why = "not running"
			case !st.State.Live():
				why = string(st.State)
			}
		}
		if why == "" {
			continue
		}
		delete(res.Env, name)
		if res.NotRunning == nil {
			res.NotRunning = map[string]string{}
		}
		res.NotRunning[name] = why
	}
}

// RedactURL hides the password of a URL-shaped address.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	user := rest[:at]
	if c := strings.Index(user, ":"); c >= 0 {
		return s[:i+3] + user[:c] + ":***" + rest[at:]
	}
	return s
}
