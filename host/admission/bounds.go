package admission

import (
	"context"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
)

// Registry settings keys `binky reserve` writes.
const (
	SettingMaxParallel  = "max_parallel"
	SettingRAMReserve   = "ram_reserve"
	SettingDiskHeadroom = "disk_headroom"
)

// Settings is where the machine's bounds are kept (the registry).
type Settings interface {
	Settings(ctx context.Context) (map[string]string, error)
	SetSetting(ctx context.Context, key, value string) error
}

// Bounds are the machine's admission bounds: the defaults, under what
// `binky reserve` recorded in Settings. Limits is the Controller's
// Options.Limits.
type Bounds struct {
	Settings Settings
	// Source, when set, caps the default disk headroom at a twentieth of
	// the filesystem, so a small BINKY_HOME filesystem is not full by
	// definition.
	Source Source
	Logger hclog.Logger

	mu  sync.Mutex
	lim Limits
	set map[string]bool // which came from Settings
}

// Limits returns the bounds as last loaded.
func (b *Bounds) Limits() Limits {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lim
}

// Load reads the machine's bounds from Settings over the defaults.
func (b *Bounds) Load(ctx context.Context) {
	lim := Limits{
		MaxParallel:  DefaultMaxParallel,
		RAMReserve:   DefaultRAMReserve,
		DiskHeadroom: DefaultDiskHeadroom,
	}
	if b.Source != nil {
		if s, err := b.Source.Sample(ctx); err == nil && s.DiskTotal > 0 {
			lim.DiskHeadroom = min(lim.DiskHeadroom, float64(s.DiskTotal)/20/1e9)
		}
	}
	set := map[string]bool{}
	all, err := b.Settings.Settings(ctx)
	if err != nil {
		b.Logger.Warn("read admission bounds; using the defaults", "error", err)
	}
	if v, ok := all[SettingMaxParallel]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			lim.MaxParallel, set[SettingMaxParallel] = n, true
		}
	}
	if v, ok := all[SettingRAMReserve]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			lim.RAMReserve, set[SettingRAMReserve] = f, true
		}
	}
	if v, ok := all[SettingDiskHeadroom]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			lim.DiskHeadroom, set[SettingDiskHeadroom] = f, true
		}
	}
	b.mu.Lock()
	b.lim, b.set = lim, set
	b.mu.Unlock()
}

// Reserve records the bounds a set (`binky reserve`; a nil field is left
// as it is), after checking each, and loads them again. It fails with
// api.CodeInvalid naming a bound out of range, before anything is
// written.
func (b *Bounds) Reserve(ctx context.Context, a api.ReserveArgs) error {
	switch {
	case a.RAM != nil && (*a.RAM < 0 || *a.RAM >= 100):
		return api.Errorf(api.CodeInvalid, "--ram %v is not a percentage: give 0 (no reserve) to 99", *a.RAM)
	case a.Disk != nil && *a.Disk < 0:
		return api.Errorf(api.CodeInvalid, "--disk %v is negative: give the GB of disk to keep free, 0 for none", *a.Disk)
	case a.MaxParallel != nil && *a.MaxParallel < 0:
		return api.Errorf(api.CodeInvalid, "--max-parallel %d is negative: give the most worlds to run at once, 0 for no bound", *a.MaxParallel)
	}
	set := func(key, v string) error { return b.Settings.SetSetting(ctx, key, v) }
	if a.RAM != nil {
		if err := set(SettingRAMReserve, strconv.FormatFloat(*a.RAM, 'f', -1, 64)); err != nil {
			return err
		}
	}
	if a.Disk != nil {
		if err := set(SettingDiskHeadroom, strconv.FormatFloat(*a.Disk, 'f', -1, 64)); err != nil {
			return err
		}
	}
	if a.MaxParallel != nil {
		if err := set(SettingMaxParallel, strconv.Itoa(*a.MaxParallel)); err != nil {
			return err
		}
	}
	b.Load(ctx)
	return nil
}

// Values reports every bound with where it comes from: max_parallel,
// ram_reserve and disk_headroom, in that order.
func (b *Bounds) Values() []api.ReserveValue {
	b.mu.Lock()
	lim, from := b.lim, b.set
	b.mu.Unlock()
	source := func(key string) string {
		if from[key] {
			return "registry (binky reserve)"
		}
		return "default"
	}
	return []api.ReserveValue{
		{Name: "max_parallel", Value: float64(lim.MaxParallel), Source: source(SettingMaxParallel)},
		{Name: "ram_reserve", Value: lim.RAMReserve, Unit: "%", Source: source(SettingRAMReserve)},
		{Name: "disk_headroom", Value: lim.DiskHeadroom, Unit: "GB", Source: source(SettingDiskHeadroom)},
	}
}
