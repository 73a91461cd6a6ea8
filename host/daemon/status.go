package daemon

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/binkyhq/binky/host/api"
)

// opStatus lists every world on the machine, grouped by project: the
// engine describes the worlds (world.Engine.Status); the daemon adds the
// admission queue, the proxy and degraded mode.
func (d *Daemon) opStatus(ctx context.Context, raw json.RawMessage, _ *stream) (any, error) {
	var a api.StatusArgs
	if err := api.Decode(raw, &a); err != nil {
		return nil, err
	}
	res, err := d.w.Status(ctx, a)
	if err != nil {
		return nil, err
	}
	if d.adm != nil {
		d.adm.AddStatus(res, a.Name == "")
	}
	if d.proxy != nil {
		res.Proxy = &api.ProxyInfo{Port: d.proxy.Port(), URL: d.proxy.URL(d.proxy.DashboardHost()), Note: d.proxy.Note()}
	}
	res.Degraded = d.deg.Status(ctx)
	if a.Name == "" && !a.Here {
		res.Remote = d.remoteWorlds()
	}
	sort.SliceStable(res.Worlds, func(i, j int) bool {
		if res.Worlds[i].Project != res.Worlds[j].Project {
			return res.Worlds[i].Project < res.Worlds[j].Project
		}
		return res.Worlds[i].Worktree < res.Worlds[j].Worktree
	})
	return *res, nil
}

// opEnv prints exactly the world's expose set.
func (d *Daemon) opEnv(ctx context.Context, raw json.RawMessage, _ *stream) (any, error) {
	var a api.EnvArgs
	if err := api.Decode(raw, &a); err != nil {
		return nil, err
	}
	rec, err := d.findWorld(ctx, a.WorldRef)
	if err != nil {
		return nil, err
	}
	res, err := d.w.Exposed(ctx, rec)
	if err != nil {
		return nil, err
	}
	res.State = rec.State
	return res, nil
}
