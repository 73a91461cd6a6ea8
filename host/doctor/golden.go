package doctor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/golden"
)

// checkGolden finds templates no registered worktree would clone: their
// project has no world, or no world's config and inputs give their key
// (the migrations moved on). Such a template only takes space.
func checkGolden(ctx context.Context, e *Env) []Finding {
	recs, err := golden.NewStore(e.Home).List()
	if len(recs) == 0 {
		if err != nil {
			return []Finding{warn("binky golden list", "some golden records cannot be read: %v", err)}
		}
		return []Finding{ok("no golden templates")}
	}
	ws, werr := worlds(e)
	if werr != nil {
		return []Finding{skip("the registry cannot be read: %v", werr)}
	}
	var out []Finding
	if err != nil {
		out = append(out, warn("binky golden list", "some golden records cannot be read: %v", err))
	}
	stale := 0
	for _, r := range recs {
		if ctx.Err() != nil {
			break
		}
		if r.Key == "" || matches(r, ws) {
			continue
		}
		stale++
		out = append(out, warn("binky golden drop "+r.Slice,
			"golden template %s (%s/%s) matches no registered world's inputs any more", r.Slice, r.Project, r.Service))
	}
	if stale == 0 {
		out = append([]Finding{ok("%d golden template(s), each matching a registered world", len(recs))}, out...)
	}
	return out
}

// matches reports whether some registered world of r's project, with its
// binky.toml and files as they are now, keys to r.
func matches(r *golden.Record, ws []world) bool {
	for _, w := range ws {
		if w.Project != r.Project || w.Path == "" {
			continue
		}
		cfg, _, err := config.Load(filepath.Join(w.Path, config.FileName))
		if err != nil {
			continue
		}
		svc := cfg.Services[r.Service]
		if svc == nil || !svc.IsAdapter() || svc.CloneFrom != r.CloneFrom {
			continue
		}
		// Only the admin URL's scheme://host:port enters the key, which
		// the record keeps as Server: no ${env.*} needs resolving.
		// The env enters as the digest the record keeps; so does the
		// adapter config when a token of it would need resolving, and
		// otherwise as binky.toml has it now (owner_role turned on).
		cfgSum := r.ConfigSum
		if !strings.Contains(fmt.Sprint(svc.Config), "${") {
			cfgSum = golden.ConfigSum(svc.Config)
		}
		key, err := golden.KeyOf(golden.Spec{Migrate: svc.Migrate, Seed: svc.Seed, Adapter: svc.Adapter, AdminURL: r.Server, Inputs: svc.Inputs, EnvSum: r.EnvSum, ConfigSum: cfgSum}, w.Path)
		if err == nil && key.Sum == r.Key {
			return true
		}
	}
	return false
}
