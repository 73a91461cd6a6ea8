package world

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/tokens"
	"github.com/binkyhq/binky/host/warm"
	lifecycle "github.com/binkyhq/binky/host/world/plan"
)

// Up is observe → plan → apply. observe reads the world as it is (its
// record, its services, its port block, its setup and what runs) and
// renders cfg against it; plan.Compute turns the two into a plan; apply
// (apply.go) carries out that plan and nothing else.

// observed is a recorded world as it is before an up changes it, and cfg
// rendered against it: the ports laid out around the recorded ones, the
// slices recorded.
type observed struct {
	cfg  *config.Config
	rec  *registry.Worktree
	svcs map[string]*registry.Service
	// lo and size are the recorded port block (0, 0: none yet); need is
	// the size the layout in w.plan needs. grows: the block grows in
	// place to need; moves: it cannot, and moves elsewhere.
	lo, size, need int
	grows, moves   bool
	setupWhy       string
	w              *world
	// sel is the world's selection of services: the recorded one, or
	// the one an up chose.
	sel selected
}

// observe reads rec as it is and renders cfg against it, with ${env.*}
// from the caller and the env files (the secret values registered with
// the redactor).
func (e *Engine) observe(ctx context.Context, cfg *config.Config, rec *registry.Worktree, caller map[string]string) (*observed, error) {
	envVals, err := resolveEnv(cfg, rec.Path, caller)
	if err != nil {
		return nil, err
	}
	e.addSecrets(cfg, envVals)
	o := &observed{cfg: cfg, rec: rec, sel: selectionOf(cfg, rec.Selection)}
	if o.w, o.svcs, err = e.worldAsRecorded(ctx, cfg, rec); err != nil {
		return nil, err
	}
	o.w.env, o.w.caller = envVals, caller
	lo, hi, err := e.ports.Block(ctx, rec.Project, rec.Name)
	if err != nil {
		return nil, err
	}
	if lo > 0 {
		o.lo, o.size = lo, hi-lo+1
	}
	o.w.plan, o.need = portLayout(cfg, o.lo, o.size, recordedPorts(o.svcs))
	if o.lo > 0 && o.need > o.size {
		grows, err := e.ports.Growable(ctx, rec.Project, rec.Name, o.need, rangeOf(cfg))
		if err != nil {
			return nil, err
		}
		o.grows, o.moves = grows, !grows
	}
	if o.setupWhy, err = e.setupWhy(cfg, rec); err != nil {
		return nil, err
	}
	return o, nil
}

// worldAsRecorded is rec's world as the registry has it: cfg with the
// ports recorded for each service (the others laid out around them) and
// the slices recorded, without ${env.*} (the caller adds them when it
// renders anything that reads them). It also returns the registry's
// services by name.
func (e *Engine) worldAsRecorded(ctx context.Context, cfg *config.Config, rec *registry.Worktree) (*world, map[string]*registry.Service, error) {
	list, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, nil, err
	}
	svcs := map[string]*registry.Service{}
	for _, sv := range list {
		svcs[sv.Name] = sv
	}
	lo, hi, err := e.ports.Block(ctx, rec.Project, rec.Name)
	if err != nil {
		return nil, nil, err
	}
	size := 0
	if lo > 0 {
		size = hi - lo + 1
	}
	plan, _ := portLayout(cfg, lo, size, recordedPorts(svcs))
	w := &world{cfg: cfg, project: rec.Project, worktree: rec.Name, path: rec.Path, plan: plan, slices: map[string]slice{},
		env: map[string]string{}, proxyURL: e.routes.URLFor(cfg), hostOf: e.hostOf(cfg, rec)}
	for _, sv := range list {
		if sv.Kind == registry.KindAdapter && sv.Address != "" {
			w.slices[sv.Name] = slice{Address: sv.Address, Values: sv.Values}
		}
	}
	return w, svcs, nil
}

// recordedPorts are the ports recorded for each cmd service.
func recordedPorts(svcs map[string]*registry.Service) map[string]map[string]int {
	out := map[string]map[string]int{}
	for name, sv := range svcs {
		if sv.Kind == registry.KindCmd && len(sv.Ports) > 0 {
			out[name] = sv.Ports
		}
	}
	return out
}

// setupWhy says why [worktree] setup runs again in rec's worktree: its
// commands or the content of its inputs changed since its last success,
// or it never succeeded there. "" when it does not run.
func (e *Engine) setupWhy(cfg *config.Config, rec *registry.Worktree) (string, error) {
	wc := &cfg.Worktree
	if len(wc.Setup) == 0 {
		return "", nil
	}
	r, err := warm.NewStore(e.home).Get(rec.Project, rec.Name, rec.Path)
	if err != nil {
		return "", err
	}
	sum, _, err := warm.SetupSum(rec.Path, wc.Setup, wc.Inputs)
	if err != nil {
		return "", fmt.Errorf("set up worktree %s: %w", rec.Name, err)
	}
	switch {
	case sum == r.SetupSum:
		return "", nil
	case r.SetupSum == "":
		return "first run in this worktree", nil
	}
	return "its commands or inputs changed", nil
}

// migrateSum sums what a slice's migrate runs: its command and the
// content of the service's inputs. "" without migrate.
func migrateSum(svc *config.Service, root string) string {
	if svc.Migrate == "" {
		return ""
	}
	sum, _, err := warm.SetupSum(root, []string{svc.Migrate}, svc.Inputs)
	if err != nil {
		return "" // unreadable inputs: the migrate itself says why
	}
	return sum
}

// wanted is cfg as the plan wants it, in start order.
func (e *Engine) wanted(o *observed) []lifecycle.Service {
	coords := o.w.coords()
	var want []lifecycle.Service
	for _, level := range o.cfg.StartOrder() {
		for _, name := range level {
			if !o.sel.in(name) {
				continue
			}
			svc := o.cfg.Services[name]
			s := lifecycle.Service{Name: name, Cmd: !svc.IsAdapter(), DependsOn: svc.DependsOn, Wake: svc.Wake}
			if s.Cmd {
				s.Hash = e.specHash(o.w, o.rec, svc, coords)
				s.Uses = slicesUsed(o.cfg, svc)
				s.Ports = o.w.plan[name]
				if svc.URL != "" {
					s.URL = coords[name+".url"]
				}
			} else {
				_, cfgJSON := recordedAs(svc)
				s.Config = orNoConfig(cfgJSON)
				s.Migrate = migrateSum(svc, o.rec.Path)
				if svc.CloneFrom != "" {
					if k, _, err := goldenKey(o.w, svc, coords); err == nil {
						s.Golden = k.Sum
					}
				}
			}
			want = append(want, s)
		}
	}
	return want
}

// recorded is what the registry and the supervisor say of each service
// of the world.
func (e *Engine) recorded(o *observed) map[string]lifecycle.Recorded {
	have := map[string]lifecycle.Recorded{}
	for _, sv := range o.svcs {
		r := lifecycle.Recorded{Cmd: sv.Kind == registry.KindCmd, Hash: sv.SpecHash, Ports: sv.Ports, URL: sv.URL,
			Golden: sv.GoldenKey, Migrate: sv.MigrateSum, Stopped: sv.Stopped}
		if r.Cmd {
			if st, ok := e.sup.State(e.SupKey(o.rec.Project, o.rec.Name, sv.Name)); ok {
				r.Live = st.State.Live()
			}
		} else {
			r.Live = sv.State == state.ServiceProvisioned && (sv.Adapter == "" || sv.Adapter == cfgAdapter(o.cfg, sv.Name))
			if sv.Admin != "" {
				// Recorded with its admin_url, so with its config too
				// (recordedAs): none recorded is none.
				r.Config = orNoConfig(sv.Config)
			}
		}
		have[sv.Name] = r
	}
	return have
}

// plan computes what up does to the observed world.
func (e *Engine) plan(o *observed, prune bool) lifecycle.Plan {
	w := lifecycle.World{Setup: o.setupWhy, Prune: prune}
	for _, name := range o.sel.skipped(o.cfg) {
		w.Skip = append(w.Skip, lifecycle.Skipped{Name: name, Why: o.sel.why})
	}
	if o.lo > 0 {
		w.Block = blockOf(o.lo, o.size)
		w.NewBlock = w.Block
		switch {
		case o.grows:
			w.NewBlock, w.BlockWhy = blockOf(o.lo, o.need), fmt.Sprintf("grows in place to %d ports, for the new ones", o.need)
		case o.moves:
			w.NewBlock, w.BlockWhy, w.Moves = "elsewhere", fmt.Sprintf("moves: it needs %d ports and the ones after %d are taken", o.need, o.lo+o.size-1), true
		}
	}
	return lifecycle.Compute(e.wanted(o), e.recorded(o), w)
}

func blockOf(lo, size int) string {
	return strconv.Itoa(lo) + "-" + strconv.Itoa(lo+size-1)
}

func orNoConfig(cfgJSON string) string {
	if cfgJSON == "" {
		return lifecycle.NoConfig
	}
	return cfgJSON
}

// slicesUsed are the adapter services whose tokens svc's command, env,
// working directory or health check reads.
func slicesUsed(cfg *config.Config, svc *config.Service) []string {
	texts := []string{svc.Cmd, svc.Cwd}
	for _, v := range svc.Env {
		texts = append(texts, v)
	}
	if h := svc.Health; h != nil {
		texts = append(texts, h.HTTP, h.TCP, h.Exec)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		for _, ref := range tokens.Refs(t) {
			name := tokens.Split(ref)[0]
			if other, ok := cfg.Services[name]; ok && other.IsAdapter() && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
