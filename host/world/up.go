package world

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/worktree"
	lifecycle "github.com/binkyhq/binky/host/world/plan"
)

// Up brings one world up: config → worktree → admission → ports → slices
// → supervise → proxy, each step recorded as it happens.
func (e *Engine) Up(ctx context.Context, a api.UpArgs, s Progress) (_ *api.World, retErr error) {
	if a.Dir == "" {
		return nil, api.Errorf(api.CodeInvalid, "up needs the directory you stand in")
	}

	// 1. the repository and its project config, then the worktree.
	repo, mainCfg, err := e.openProject(ctx, a.Dir)
	if err != nil {
		return nil, err
	}
	if a.DryRun {
		return e.dryRun(ctx, a, mainCfg)
	}
	t, err := e.resolveUpTarget(ctx, s, repo, mainCfg, a)
	if err != nil {
		return nil, err
	}
	cfg, project, wtName := t.cfg, t.cfg.Project.Name, t.name
	// 2. the services it runs: a selection that names nothing there fails
	// the up before anything is queued or changed.
	if t.sel, err = e.upSelection(ctx, cfg, wtName, a); err != nil {
		return nil, err
	}

	// 3. admission: wait in the FIFO queue for a place (max_parallel, free
	// RAM and disk), or resume the world if it is suspended. An up that
	// fails gives its place back.
	queued := &registry.Worktree{Project: project, Name: wtName, Branch: t.wt.Branch, Path: t.wt.Path, Repo: repo.Root, ConfigPath: cfg.File}
	if err := e.admit(ctx, s, cfg, queued, a.NoWait); err != nil {
		return nil, err
	}
	key := Key(project, wtName)
	defer func() {
		if e.admOff {
			return
		}
		e.adm.Done(key)
		if retErr != nil {
			e.released(project, wtName)
		}
	}()

	// The world's lock: a caller that hangs up while another op holds it
	// leaves, as it leaves the queue.
	lock := e.WorldLock(project, wtName)
	lctx, cancel := UntilGone(ctx, s)
	err = lock.Lock(lctx, s, "up", wtName)
	cancel()
	if err != nil {
		return nil, api.Errorf(api.CodeConflict, "%v", err)
	}
	defer lock.Unlock()

	w, err := e.converge(ctx, s, t, a, repo.Root)
	if err != nil {
		return nil, err
	}
	if !e.admOff {
		e.adm.SetIdle(key, cfg.Project.IdleSuspend)
	}
	e.markBrowserUp(cfg, project, wtName)
	e.events.Emit(events.Event{Event: events.UpDone, Project: project, Worktree: wtName})
	return w, nil
}

// converge is up's observe → plan → apply (observe.go, apply.go) under
// the world's lock: an existing world is planned first (nothing to do
// returns its status at once), then the world is recorded as starting, its
// env prepared, and a new world observed and planned; apply carries the
// plan out. A failure is recorded as the world's.
func (e *Engine) converge(ctx context.Context, s Progress, t *upTarget, a api.UpArgs, repoRoot string) (*api.World, error) {
	o, upPlan, noop, err := e.planUp(ctx, s, t, a)
	if err != nil || noop != nil {
		return noop, err
	}
	rec, err := e.recordUp(ctx, t, repoRoot)
	if err != nil {
		return nil, err
	}
	if t.cfgErr != nil {
		return nil, e.failUp(ctx, rec, t.cfgErr)
	}
	if _, err := e.prepareEnv(ctx, s, t.cfg, rec, a.Env); err != nil {
		return nil, e.failUp(ctx, rec, err)
	}
	if err := e.reg.SetWorktreeSelection(ctx, rec.ID, t.sel.sel.Encode()); err != nil {
		return nil, e.failUp(ctx, rec, err)
	}
	rec.Selection = t.sel.sel.Encode()
	var p lifecycle.Plan
	if o == nil {
		// A new world (or one that could not be observed before it was
		// recorded): named, then all of it is planned now.
		if _, err := e.claimNames(ctx, t.cfg, rec); err != nil {
			return nil, e.failUp(ctx, rec, err)
		}
		if o, err = e.observe(ctx, t.cfg, rec, a.Env); err != nil {
			return nil, e.failUp(ctx, rec, err)
		}
		o.sel = t.sel
		p = e.plan(o, a.Prune)
	} else {
		o.rec, p = rec, *upPlan
	}
	w, err := e.apply(ctx, s, o, p, a.Env)
	if err != nil {
		return nil, e.failUp(ctx, rec, err)
	}
	w.Plan = upPlan
	return w, nil
}

// openProject opens the repository dir is inside and its project config,
// and checks this home may serve that project.
func (e *Engine) openProject(ctx context.Context, dir string) (*worktree.Repo, *config.Config, error) {
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		return nil, nil, api.Errorf(api.CodeInvalid, "%s is not inside a git repository: binky gives each worktree of a repository its world, so run it in one (git init, or cd into a clone): %w", dir, err)
	}
	mainCfg, err := LoadConfigContext(ctx, filepath.Join(repo.Root, "binky.toml"))
	if err != nil {
		return nil, nil, err
	}
	if err := e.checkOwner(ctx, mainCfg.Project.Name, repo.Root); err != nil {
		return nil, nil, err
	}
	return repo, mainCfg, nil
}

// upTarget is the world an up is about: its worktree, the config it runs
// (the worktree's own binky.toml when it has one) and the world's name.
// cfgErr is why the worktree's config did not load; the up records it as
// the world's failure once the world is recorded.
type upTarget struct {
	wt     worktree.Worktree
	cfg    *config.Config
	cfgErr error
	name   string
	// sel is the selection of services the up runs (upSelection).
	sel selected
}

// resolveUpTarget finds or makes the worktree an up asks for, loads its
// config and names its world.
func (e *Engine) resolveUpTarget(ctx context.Context, s Progress, repo *worktree.Repo, mainCfg *config.Config, a api.UpArgs) (*upTarget, error) {
	s.Progress("worktree", "", a.Branch)
	wt, created, err := e.ensureWorktree(ctx, repo, a, mainCfg)
	if err != nil {
		return nil, err
	}
	cfg, cfgErr := mainCfg, error(nil)
	if wtCfg := filepath.Join(wt.Path, "binky.toml"); wt.Path != repo.Root {
		if _, statErr := os.Stat(wtCfg); statErr == nil {
			s.Progress("config", "", wtCfg)
			if c, err := LoadConfigContext(ctx, wtCfg); err != nil {
				cfgErr = err
			} else {
				cfg = c
			}
		}
	}
	project := cfg.Project.Name
	if project != mainCfg.Project.Name {
		if err := e.checkOwner(ctx, project, repo.Root); err != nil {
			return nil, err
		}
	}
	wtName, err := e.branchWorldName(ctx, repo, project, wt)
	if err != nil {
		return nil, err
	}
	if wt.Branch == "" {
		// A detached HEAD keeps the name its world was first given
		// (adopted.go).
		wtName = e.detachedWorldName(ctx, project, wt)
	}
	if created {
		if err := worktree.MarkMade(wt.Path); err != nil {
			e.log.Warn("mark the new worktree as binky's", "path", wt.Path, "error", err)
		}
		e.events.Emit(events.Event{Event: events.WorktreeCreated, Project: project, Worktree: wtName})
	}
	return &upTarget{wt: wt, cfg: cfg, cfgErr: cfgErr, name: wtName}, nil
}

// planUp observes and plans the up of a world that exists: nothing
// changed and everything up means nothing to do, as fast as before: then
// noop is the world's status. Otherwise the plan is told to the caller
// step by step before apply carries it out. A world not recorded yet, or
// one that cannot be observed (its env unresolved: the up then fails
// saying why once the world is recorded), has no plan yet.
func (e *Engine) planUp(ctx context.Context, s Progress, t *upTarget, a api.UpArgs) (_ *observed, _ *lifecycle.Plan, noop *api.World, _ error) {
	cfg := t.cfg
	old, err := e.reg.Worktree(ctx, cfg.Project.Name, t.name)
	if err != nil || t.cfgErr != nil {
		return nil, nil, nil, nil
	}
	// Its names first: a stable name handed out now changes its URLs,
	// which the plan then carries.
	if _, err := e.claimNames(ctx, cfg, old); err != nil {
		return nil, nil, nil, err
	}
	o, err := e.observe(ctx, cfg, old, a.Env)
	if err != nil {
		return nil, nil, nil, nil
	}
	o.sel = t.sel
	p := e.plan(o, a.Prune)
	if e.noop(ctx, o, p) {
		w, err := e.worldStatus(ctx, old)
		if err != nil {
			return nil, nil, nil, err
		}
		p.Verify = nil
		w.Noop, w.Plan = true, &p
		return o, &p, w, nil
	}
	for _, line := range p.Lines() {
		s.Progress("plan", "", line)
	}
	return o, &p, nil, nil
}

// recordUp records the world as starting before anything else can fail,
// so a failed up leaves a world that status shows and remove reaches.
func (e *Engine) recordUp(ctx context.Context, t *upTarget, repoRoot string) (*registry.Worktree, error) {
	project := t.cfg.Project.Name
	rec, err := e.reg.UpsertWorktree(ctx, &registry.Worktree{
		Project: project, Name: t.name, Branch: t.wt.Branch, Path: t.wt.Path,
		Repo: repoRoot, ConfigPath: t.cfg.File, State: state.WorldStarting,
	})
	if err != nil {
		return nil, fmt.Errorf("record worktree: %w", err)
	}
	e.events.Emit(events.Event{Event: events.UpStarted, Project: project, Worktree: t.name})
	return rec, nil
}

// failUp records why the up of rec failed and returns err.
func (e *Engine) failUp(ctx context.Context, rec *registry.Worktree, err error) error {
	// The reason status shows: what failed, on one line (oneLine), redacted
	// (the full text, with log lines, went to the caller).
	reason := OneLine(e.redact.String(err.Error()))
	// An up cut off by its context (a stopping daemon, a caller gone
	// while queued) still records why: with the op's context, the
	// record would fail too and the world would stay "starting".
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := e.reg.SetWorktreeStateReason(rctx, rec.ID, state.WorldFailed, reason); serr != nil {
		err = fmt.Errorf("%w (and recording the failure failed: %v)", err, serr)
	}
	e.events.Emit(events.Event{Event: events.UpFailed, Project: rec.Project, Worktree: rec.Name, Error: err.Error()})
	e.routes.Refresh(rctx)
	return err
}

// prepareEnv runs [worktree] copy first: a copied env file is the one
// read. Then ${env.*}, resolved now, the secret ones registered before
// anything logs.
func (e *Engine) prepareEnv(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, caller map[string]string) (map[string]string, error) {
	if err := e.copyOnce(ctx, s, cfg, rec); err != nil {
		return nil, err
	}
	envVals, err := resolveEnv(cfg, rec.Path, caller)
	if err != nil {
		return nil, err
	}
	if err := e.reg.SetWorktreeSecrets(ctx, rec.ID, e.addSecrets(cfg, envVals)); err != nil {
		return nil, err
	}
	return envVals, nil
}

// reservePorts is up's step 4: one block for every port the world asks
// for, each proven free of other programs (a block kept across down may
// have been taken meanwhile) of size ports. It returns the block's first
// port, 0 when the world asks for none.
func (e *Engine) reservePorts(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, size int) (int, error) {
	project, wtName := rec.Project, rec.Name
	lo, hi := 0, 0
	if size > 0 {
		s.Progress("ports", "", fmt.Sprintf("%d wanted", size))
		var err error
		var skipped []int
		lo, hi, skipped, err = e.ports.ReserveSkipping(ctx, project, wtName, size, rangeOf(cfg))
		noteIgnoredLeases(s, e.ports)
		if err != nil {
			return 0, api.Wrap(api.CodeConflict, err)
		}
		if len(skipped) > 0 {
			// Another program's ports were stepped over: say whose.
			who := heldBy(skipped)
			e.events.Emit(events.Event{Event: events.PortsHeld, Project: project, Worktree: wtName, Ports: skipped, Detail: who})
			s.Progress("ports", "", "skipped ports held by another program: "+who)
		}
		if lo, hi, err = e.proveBlock(ctx, s, cfg, rec, lo, hi, size); err != nil {
			return 0, err
		}
		e.events.Emit(events.Event{Event: events.PortsReserved, Project: project, Worktree: wtName, PortLo: lo, PortHi: hi})
	}
	return lo, nil
}

// startLevels starts the cmd services of cfg level by level in its
// depends_on order, the independent ones of a level together: start
// starts one and returns once it is healthy. The first level with a
// failure ends it.
func startLevels(cfg *config.Config, start func(name string) error) error {
	for _, level := range cfg.StartOrder() {
		var wg sync.WaitGroup
		errs := make([]error, len(level))
		for i, name := range level {
			if cfg.Services[name].IsAdapter() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = start(name)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

func rangeOf(cfg *config.Config) [2]int {
	return cfg.Project.PortRange
}

// allRunning reports whether every service of an up world that its
// selection runs still runs.
func (e *Engine) allRunning(ctx context.Context, cfg *config.Config, rec *registry.Worktree, sel selected) bool {
	for _, name := range cfg.Order {
		if !sel.in(name) {
			continue
		}
		if cfg.Services[name].IsAdapter() {
			// A slice a killed reset left half made is not up.
			if sv, err := e.reg.Service(ctx, rec.ID, name); err != nil || sv.State != state.ServiceProvisioned {
				return false
			}
			continue
		}
		st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, name))
		if !ok || !st.State.Running() {
			if sv, err := e.reg.Service(ctx, rec.ID, name); err == nil && sv.Stopped {
				continue // binky stop stopped it: up leaves it so
			}
			if cfg.Services[name].Wake {
				continue // it waits for its request (waitsRecorded)
			}
			return false
		}
	}
	return true
}

// noteIgnoredLeases names, in up's progress, the port lease files the
// last reservation did not count (another user's junk, a gone home's
// lease…), at most three, one line each: "ignored port lease <path>
// (owner uid N): <reason>".
func noteIgnoredLeases(s Progress, a *ports.Allocator) {
	ignored, total := a.IgnoredLeases()
	for i, ig := range ignored {
		if i == 3 {
			s.Progress("ports", "", fmt.Sprintf("and %d more ignored port leases; binky doctor lists them", total-3))
			return
		}
		s.Progress("ports", "", ig.String())
	}
}

// anyOwned reports whether some port of held has a visible listener.
func anyOwned(held []int) bool {
	for _, p := range held {
		if ports.OwnerPid(p) != 0 {
			return true
		}
	}
	return false
}

// proveBlock checks that no other program holds a port of the world's block
// lo..hi. Ports the world's own processes hold are fine. When another
// program holds one and nothing of the world runs, the block moves to free
// ports; when the world runs, the error names the port and its holder.
func (e *Engine) proveBlock(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree, lo, hi, size int) (int, int, error) {
	held := e.ports.Check(ctx, lo, hi)
	// A port found held with no visible listener is looked at again for a
	// moment: under a stampede a probe can fail for a passing reason (a
	// probe of a neighbour's search, descriptors running short).
	for try := 0; try < 5 && len(held) > 0 && !anyOwned(held); try++ {
		time.Sleep(40 * time.Millisecond)
		held = e.ports.Check(ctx, lo, hi)
	}
	if len(held) == 0 {
		return lo, hi, nil
	}
	own := supervisor.MarkedProcesses(supervisor.WorldMarker(e.homeID, rec.Project, rec.Name))
	var foreign []int
	for _, p := range held {
		if pid := ports.OwnerPid(p); pid != 0 && slices.Contains(own, pid) {
			continue
		}
		foreign = append(foreign, p)
	}
	if len(foreign) == 0 {
		return lo, hi, nil
	}
	who := heldBy(foreign)
	e.events.Emit(events.Event{Event: events.PortsHeld, Project: rec.Project, Worktree: rec.Name, Ports: foreign, Detail: who})
	if len(own) > 0 {
		return 0, 0, api.Errorf(api.CodeConflict, "ports of %s are held by another program: %s; stop that program, or run binky down %s and up again to move the world to free ports", rec.Name, who, rec.Name)
	}
	if _, _, err := e.ports.Release(ctx, rec.Project, rec.Name); err != nil {
		return 0, 0, err
	}
	nlo, nhi, err := e.ports.Reserve(ctx, rec.Project, rec.Name, size, rangeOf(cfg))
	if err != nil {
		return 0, 0, api.Errorf(api.CodeConflict, "ports %d-%d are held by another program (%s) and no other block is free: %w", lo, hi, who, err)
	}
	s.Progress("ports", "", fmt.Sprintf("held by another program: %s; the world moves to ports %d-%d", who, nlo, nhi))
	return nlo, nhi, nil
}
