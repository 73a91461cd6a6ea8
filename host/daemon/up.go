package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

// World states kept in the registry.
const (
	stateStarting = "starting"
	stateUp       = "up"
	stateDown     = "down"
	stateFailed   = "failed"
	stateStopping = "stopping"
)

// opUp brings one world up: config → worktree → ports → slices → supervise
// → proxy, each step recorded as it happens.
func (d *Daemon) opUp(ctx context.Context, raw json.RawMessage, s *stream) (any, error) {
	var a api.UpArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	if a.Dir == "" {
		return nil, errorf(api.CodeInvalid, "up needs the directory you stand in")
	}

	// 1. the repository and its project config, then the worktree.
	repo, err := worktree.Open(ctx, a.Dir)
	if err != nil {
		return nil, errorf(api.CodeInvalid, "%v", err)
	}
	mainCfg, err := loadConfig(filepath.Join(repo.Root, "binky.toml"))
	if err != nil {
		return nil, err
	}
	s.progress("worktree", "", a.Branch)
	wt, created, err := d.ensureWorktree(ctx, repo, a, mainCfg)
	if err != nil {
		return nil, err
	}
	cfg := mainCfg
	if wtCfg := filepath.Join(wt.Path, "binky.toml"); wt.Path != repo.Root {
		if _, statErr := os.Stat(wtCfg); statErr == nil {
			s.progress("config", "", wtCfg)
			if cfg, err = loadConfig(wtCfg); err != nil {
				return nil, err
			}
		}
	}
	project := cfg.Project.Name
	wtName := worktreeName(wt)
	if created {
		d.emit(events.Event{Event: events.WorktreeCreated, Project: project, Worktree: wtName})
	}

	lock := d.worldLock(project, wtName)
	lock.Lock()
	defer lock.Unlock()

	// Already up: nothing to do.
	if rec, err := d.reg.Worktree(ctx, project, wtName); err == nil && rec.State == stateUp && d.allRunning(ctx, cfg, rec) {
		w, err := d.worldStatus(ctx, rec)
		if err != nil {
			return nil, err
		}
		w.Noop = true
		return w, nil
	}

	// ${env.*}: resolved now, registered as secrets before anything logs.
	envVals, err := resolveEnv(cfg, wt.Path, a.Env)
	if err != nil {
		return nil, err
	}
	for _, v := range envVals {
		d.redact.Add(v)
	}

	rec, err := d.reg.UpsertWorktree(ctx, &registry.Worktree{
		Project: project, Name: wtName, Branch: wt.Branch, Path: wt.Path,
		Repo: repo.Root, ConfigPath: cfg.File, State: stateStarting,
	})
	if err != nil {
		return nil, fmt.Errorf("record worktree: %w", err)
	}
	secrets := make([]string, 0, len(envVals))
	for _, v := range envVals {
		secrets = append(secrets, v)
	}
	if err := d.reg.SetWorktreeSecrets(ctx, rec.ID, secrets); err != nil {
		return nil, err
	}
	d.emit(events.Event{Event: events.UpStarted, Project: project, Worktree: wtName})

	w, err := d.bringUp(ctx, s, cfg, rec, envVals)
	if err != nil {
		d.reg.SetWorktreeState(ctx, rec.ID, stateFailed)
		d.emit(events.Event{Event: events.UpFailed, Project: project, Worktree: wtName, Error: err.Error()})
		d.refreshRoutes(ctx)
		return nil, err
	}
	d.emit(events.Event{Event: events.UpDone, Project: project, Worktree: wtName})
	return w, nil
}

// bringUp runs steps 4–7 for a recorded worktree.
func (d *Daemon) bringUp(ctx context.Context, s *stream, cfg *config.Config, rec *registry.Worktree, envVals map[string]string) (*api.World, error) {
	project, wtName := rec.Project, rec.Name

	// 4. ports: one block for every port the world asks for.
	_, size := portPlan(cfg, 0)
	lo, hi := 0, 0
	if size > 0 {
		s.progress("ports", "", fmt.Sprintf("%d wanted", size))
		var err error
		lo, hi, err = d.ports.Reserve(ctx, project, wtName, size, rangeOf(cfg))
		if err != nil {
			return nil, errorf(api.CodeConflict, "%v", err)
		}
		d.emit(events.Event{Event: events.PortsReserved, Project: project, Worktree: wtName, PortLo: lo, PortHi: hi})
	}
	plan, _ := portPlan(cfg, lo)
	w := &world{
		cfg: cfg, project: project, worktree: wtName, path: rec.Path,
		plan: plan, slices: map[string]slice{}, env: envVals,
		proxyURL: d.urlFor(cfg),
		hostOf:   func(svc string) string { return names.Host(cfg.Services[svc].URL, wtName, project) },
	}

	// 5. slices, in depends_on order so an adapter's tokens can name another.
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			svc := cfg.Services[name]
			if !svc.IsAdapter() {
				continue
			}
			sl, err := d.ensureSlice(ctx, s, w, rec, svc)
			if err != nil {
				return nil, err
			}
			w.slices[name] = sl
		}
	}

	// 6. supervise: cmd services level by level, independent ones in parallel.
	coords := w.coords()
	for _, level := range cfg.StartOrder() {
		var wg sync.WaitGroup
		errs := make([]error, len(level))
		for i, name := range level {
			svc := cfg.Services[name]
			if svc.IsAdapter() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = d.startService(ctx, s, w, rec, svc, coords)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}

	// 7. proxy, 8. registry.
	if err := d.reg.SetWorktreeState(ctx, rec.ID, stateUp); err != nil {
		return nil, fmt.Errorf("record world state: %w", err)
	}
	d.refreshRoutes(ctx)
	s.progress("ready", "", "")
	rec.State = stateUp
	return d.worldStatus(ctx, rec)
}

// ensureWorktree finds or creates the worktree a request means.
func (d *Daemon) ensureWorktree(ctx context.Context, repo *worktree.Repo, a api.UpArgs, cfg *config.Config) (worktree.Worktree, bool, error) {
	if a.Branch == "" {
		wt, err := worktree.Current(ctx, a.Dir)
		if err != nil {
			return wt, false, errorf(api.CodeInvalid, "%v", err)
		}
		return wt, false, nil
	}
	dir := cfg.Project.WorktreeDir
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(repo.Root, dir)
	}
	m := d.repoLock(repo.Root)
	m.Lock()
	defer m.Unlock()
	wt, created, err := repo.Ensure(ctx, a.Branch, dir)
	if err != nil {
		return wt, false, errorf(api.CodeInvalid, "%v", err)
	}
	return wt, created, nil
}

// worktreeName is the world's name: from its branch, or its directory when
// it has none (detached HEAD).
func worktreeName(wt worktree.Worktree) string {
	if wt.Branch != "" {
		return names.Worktree(wt.Branch)
	}
	return names.Worktree(filepath.Base(wt.Path))
}

// loadConfig reads a binky.toml, turning its errors into the same lines
// `binky check` prints.
func loadConfig(path string) (*config.Config, error) {
	cfg, diags, err := config.Load(path)
	if err != nil {
		return nil, errorf(api.CodeInvalid, "%v", err)
	}
	if diags.HasErrors() {
		var lines []string
		for _, dg := range diags {
			if dg.Severity == config.SeverityError {
				lines = append(lines, dg.String())
			}
		}
		return nil, errorf(api.CodeInvalid, "binky.toml has errors (run `binky check`):\n%s", strings.Join(lines, "\n"))
	}
	return cfg, nil
}

func rangeOf(cfg *config.Config) [2]int {
	return cfg.Project.PortRange
}

// allRunning reports whether every cmd service of an up world still runs.
func (d *Daemon) allRunning(ctx context.Context, cfg *config.Config, rec *registry.Worktree) bool {
	for _, name := range cfg.Order {
		if cfg.Services[name].IsAdapter() {
			continue
		}
		st, ok := d.sup.State(supKey(rec.Project, rec.Name, name))
		if !ok || (st.State != "running" && st.State != "starting") {
			return false
		}
	}
	return true
}
