package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/host/world"
)

// opReserve sets the machine's admission bounds (persisted in the
// registry) and reports every bound with where it comes from.
func (d *Daemon) opReserve(ctx context.Context, raw json.RawMessage, _ *stream) (any, error) {
	var a api.ReserveArgs
	if err := api.Decode(raw, &a); err != nil {
		return nil, err
	}
	switch {
	case a.RAM != nil && (*a.RAM < 0 || *a.RAM >= 100):
		return nil, api.Errorf(api.CodeInvalid, "--ram %v is not a percentage: give 0 (no reserve) to 99", *a.RAM)
	case a.Disk != nil && *a.Disk < 0:
		return nil, api.Errorf(api.CodeInvalid, "--disk %v is negative: give the GB of disk to keep free, 0 for none", *a.Disk)
	case a.MaxParallel != nil && *a.MaxParallel < 0:
		return nil, api.Errorf(api.CodeInvalid, "--max-parallel %d is negative: give the most worlds to run at once, 0 for no bound", *a.MaxParallel)
	}
	set := func(key, v string) error { return d.reg.SetSetting(ctx, key, v) }
	if a.RAM != nil {
		if err := set(settingRAMReserve, strconv.FormatFloat(*a.RAM, 'f', -1, 64)); err != nil {
			return nil, err
		}
	}
	if a.Disk != nil {
		if err := set(settingDiskHeadroom, strconv.FormatFloat(*a.Disk, 'f', -1, 64)); err != nil {
			return nil, err
		}
	}
	if a.MaxParallel != nil {
		if err := set(settingMaxParallel, strconv.Itoa(*a.MaxParallel)); err != nil {
			return nil, err
		}
	}
	d.loadLimits(ctx)
	if d.adm != nil {
		d.adm.Recheck() // every waiter is judged by the new bounds at once
		d.adm.Kick()
	}

	d.limits.mu.Lock()
	lim, from := d.limits.lim, d.limits.set
	d.limits.mu.Unlock()
	source := func(key string) string {
		if from[key] {
			return "registry (binky reserve)"
		}
		return "default"
	}
	res := api.ReserveResult{Values: []api.ReserveValue{
		{Name: "max_parallel", Value: float64(lim.MaxParallel), Source: source(settingMaxParallel)},
		{Name: "ram_reserve", Value: lim.RAMReserve, Unit: "%", Source: source(settingRAMReserve)},
		{Name: "disk_headroom", Value: lim.DiskHeadroom, Unit: "GB", Source: source(settingDiskHeadroom)},
	}}
	// The project the caller stands in can lower them for itself.
	if a.Dir != "" {
		if repo, err := worktree.Open(ctx, a.Dir); err == nil {
			file := filepath.Join(repo.Root, "binky.toml")
			if cfg, err := world.LoadConfigContext(ctx, file); err == nil {
				own := []float64{float64(cfg.Project.MaxParallel), cfg.Project.RAMReserve, cfg.Project.DiskHeadroom}
				for i, v := range own {
					if v != 0 {
						res.Values[i].Project, res.Values[i].ProjectFile = v, file
					}
				}
			}
		}
	}
	if d.adm != nil {
		res.Pressure = pressureOf(d.adm.Snapshot())
		d.jobsPressure(&res.Pressure)
	}
	return res, nil
}
