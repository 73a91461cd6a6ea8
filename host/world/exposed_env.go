package world

import (
	"context"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
)

// Exposed computes the expose set of a recorded world, with the direct
// address of each exposed service that listens on a port of its block.
func (e *Engine) Exposed(ctx context.Context, rec *registry.Worktree) (api.EnvResult, error) {
	res := api.EnvResult{Project: rec.Project, Worktree: rec.Name}
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
	for _, name := range res.Order {
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
