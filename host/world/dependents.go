package world

import (
	"context"
	"slices"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
)

// dependents lists the cmd services of cfg that depend, directly or
// through other services, on any of names, in start order.
func dependents(cfg *config.Config, names []string) []string {
	hit := map[string]bool{}
	for _, n := range names {
		hit[n] = true
	}
	var out []string
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			svc := cfg.Services[name]
			if hit[name] {
				continue
			}
			for _, dep := range svc.DependsOn {
				if hit[dep] {
					hit[name] = true
					if !svc.IsAdapter() {
						out = append(out, name)
					}
					break
				}
			}
		}
	}
	return out
}

// stopDependents stops the running cmd services that depend on the slices
// named, so that the start step that follows starts them again, against
// the slice as it is now. why goes to the progress.
func (e *Engine) stopDependents(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, rebuilt []string, why string) error {
	if len(rebuilt) == 0 {
		return nil
	}
	for _, name := range slices.Backward(dependents(cfg, rebuilt)) {
		key := e.SupKey(rec.Project, rec.Name, name)
		if st, ok := e.sup.State(key); !ok || !st.State.Live() {
			continue
		}
		s.Progress("restart", name, why)
		if err := e.sup.Stop(ctx, key); err != nil {
			return api.Errorf(api.CodeFailed, "stop %s to restart it (%s): %w", name, why, err)
		}
	}
	return nil
}
