package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/golden"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/warm"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk"
)

// Down stops a world's processes; files, ports and slices stay.
func (e *Engine) Down(ctx context.Context, a api.DownArgs, s Progress) (*api.World, error) {
	rec, unlock, err := e.lockWorld(ctx, s, "down", a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := e.stopWorld(ctx, s, rec, state.WorldStopping, state.WorldDown); err != nil {
		return nil, err
	}
	rec.State = state.WorldDown
	return e.worldStatus(ctx, rec)
}

// stopWorld stops every process of a world: the services the supervisor
// runs, then anything else carrying the world's marker (a service of an up
// that failed before a daemon restart, a migrate left by a killed daemon,
// a descendant that escaped into a session of its own). The world is
// recorded in state during before anything is stopped and in state after
// once nothing of it runs; a registry that cannot record either fails the
// call, so an acknowledged stop is durable. It fails, naming the pids,
// while any process of the world is alive.
func (e *Engine) stopWorld(ctx context.Context, s Progress, rec *registry.Worktree, during, after state.World) error {
	e.beforeStop(ctx, rec)
	if err := e.reg.SetWorktreeState(ctx, rec.ID, during); err != nil {
		return fmt.Errorf("record that %s is %s (nothing was stopped): %w", rec.Name, during, err)
	}
	e.events.Emit(events.Event{Event: events.DownStarted, Project: rec.Project, Worktree: rec.Name})
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return err
	}
	grace := escapeGrace(e.stopConfig(rec))
	// What the services run now, whatever group, session or environment
	// it took: what is left of it once they are stopped escaped them.
	var leaders []int
	for _, sv := range svcs {
		if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, sv.Name)); sv.Kind == registry.KindCmd && ok && st.Pid > 0 && st.State.Live() {
			leaders = append(leaders, st.Pid)
		}
	}
	tree := supervisor.WorldTree(leaders)
	var errs []error
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd {
			continue
		}
		s.Progress("stop", sv.Name, "")
		err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, sv.Name))
		switch {
		case err == nil:
		case errors.Is(err, supervisor.ErrEscaped):
			// Its escaped descendants carry the marker: ended below.
			e.events.Emit(events.Event{Event: events.ServiceEscaped, Project: rec.Project, Worktree: rec.Name, Service: sv.Name, Error: err.Error()})
		default:
			errs = append(errs, fmt.Errorf("stop %s: %w", sv.Name, err))
		}
	}
	marker := supervisor.WorldMarker(e.homeID, rec.Project, rec.Name)
	if pids := supervisor.MarkedProcesses(marker); len(pids) > 0 {
		s.Progress("stop", "", fmt.Sprintf("ending %d more process(es) of the world: pid %s", len(pids), joinInts(pids)))
		if left := supervisor.EndMarked(marker, syscall.SIGTERM, grace); len(left) > 0 {
			errs = append(errs, fmt.Errorf("pid %s of world %s still running after SIGKILL (end them with kill -9, then run this again)", joinInts(left), rec.Name))
		}
	}
	// The world's cgroup holds even what dropped its marker and left its
	// session: a daemon a service double-forked, with a clean environment.
	if pids := e.cgroups.Procs(rec.Project, rec.Name); len(pids) > 0 {
		s.Progress("stop", "", fmt.Sprintf("ending %d process(es) left in the world's cgroup: pid %s", len(pids), joinInts(pids)))
		if left := e.cgroups.End(rec.Project, rec.Name, grace); len(left) > 0 {
			errs = append(errs, fmt.Errorf("pid %s of world %s still running after SIGKILL (end them with kill -9, then run this again)", joinInts(left), rec.Name))
		}
	}
	// Without a cgroup, a descendant that left the service's session and
	// cleared its marker is found by its parent: it was in the tree.
	if left := supervisor.Survivors(tree); len(left) > 0 {
		pids := joinInts(supervisor.Pids(left))
		s.Progress("stop", "", fmt.Sprintf("ending %d process(es) of the world that left its session and cleared its marker: pid %s", len(left), pids))
		e.events.Emit(events.Event{Event: events.ServiceEscaped, Project: rec.Project, Worktree: rec.Name, Detail: "left its session and cleared its marker: pid " + pids})
		if still := supervisor.EndProcs(left, syscall.SIGTERM, grace); len(still) > 0 {
			errs = append(errs, fmt.Errorf("pid %s of world %s still running after SIGKILL (end them with kill -9, then run this again)", joinInts(still), rec.Name))
		}
	}
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd {
			continue
		}
		if err := e.reg.SetServiceState(ctx, rec.ID, sv.Name, state.ServiceStopped, nil, ""); err != nil {
			errs = append(errs, fmt.Errorf("record that %s stopped: %w", sv.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		e.events.Emit(events.Event{Event: events.DownFailed, Project: rec.Project, Worktree: rec.Name, Error: err.Error()})
		return api.Errorf(api.CodeFailed, "stop %s: %w", rec.Name, err)
	}
	e.reportHeldPorts(ctx, s, rec, 5*time.Second)
	if err := e.reg.SetWorktreeState(ctx, rec.ID, after); err != nil {
		err = fmt.Errorf("its processes are stopped, but the registry could not record it (run the command again): %w", err)
		e.events.Emit(events.Event{Event: events.DownFailed, Project: rec.Project, Worktree: rec.Name, Error: err.Error()})
		return api.Errorf(api.CodeFailed, "stop %s: %w", rec.Name, err)
	}
	rec.State = after
	e.routes.Refresh(ctx)
	e.events.Emit(events.Event{Event: events.DownDone, Project: rec.Project, Worktree: rec.Name})
	e.released(rec.Project, rec.Name) // admits the next queued world
	e.woken.forget(rec.Project, rec.Name)
	return nil
}

// escapeMargin is what ending escapees may take beyond the world's
// longest stop_timeout: the SIGTERM's delivery and the last poll.
const escapeMargin = time.Second

// escapeGrace is how long down gives the world's escaped processes to end
// after SIGTERM before it kills them: the longest stop_timeout of its cmd
// services (the one it would have given them inside their group) and
// escapeMargin.
func escapeGrace(cfg *config.Config) time.Duration {
	longest := time.Duration(0)
	if cfg != nil {
		for _, svc := range cfg.Services {
			if !svc.IsAdapter() && svc.StopTimeout > longest {
				longest = svc.StopTimeout
			}
		}
	}
	if longest == 0 {
		longest = config.DefaultStopTimeout
	}
	return longest + escapeMargin
}

// stopConfig is the config whose stop_timeouts bound a stop of rec; nil
// when none can be read (a remove whose worktree went): the default then.
func (e *Engine) stopConfig(rec *registry.Worktree) *config.Config {
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil
	}
	return cfg
}

// reportHeldPorts waits up to wait for the world's ports to be free once its
// processes are gone, and reports (ports_held, and a progress line naming
// the holders) those something else still holds.
func (e *Engine) reportHeldPorts(ctx context.Context, s Progress, rec *registry.Worktree, wait time.Duration) {
	lo, hi, err := e.ports.Block(ctx, rec.Project, rec.Name)
	if err != nil || lo == 0 {
		return
	}
	deadline := time.Now().Add(wait)
	held := e.ports.Check(ctx, lo, hi)
	for len(held) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		held = e.ports.Check(ctx, lo, hi)
	}
	if len(held) == 0 {
		return
	}
	who := heldBy(held)
	e.events.Emit(events.Event{Event: events.PortsHeld, Project: rec.Project, Worktree: rec.Name, Ports: held, Detail: who})
	s.Progress("ports", "", "still held by another program: "+who)
}

// heldBy names the holder of each port: "20001 by pid 42 (python3 …)".
func heldBy(held []int) string {
	parts := make([]string, 0, len(held))
	for _, p := range held {
		if o := ports.Owner(p); o != "" {
			parts = append(parts, fmt.Sprintf("%d by %s", p, o))
		} else {
			parts = append(parts, fmt.Sprintf("%d (holder not visible)", p))
		}
	}
	return strings.Join(parts, ", ")
}

// Remove destroys a world: processes, slices, ports, logs and the git
// worktree. It first checks everything that could refuse — uncommitted
// changes or a lock on the worktree, the config, ${env.*} and adapters its
// slices need — so a refusal changes nothing. It then records the intent
// (state removing) before it destroys anything; a remove cut short (a
// killed daemon, a full disk) is finished by running it again.
func (e *Engine) Remove(ctx context.Context, a api.RemoveArgs, s Progress) (*api.World, error) {
	rec, unlock, err := e.lockWorld(ctx, s, "remove", a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// 1. everything that could refuse, before anything changes.
	isMain := rec.Path == rec.Repo
	// The worktree goes with the world only when binky made it, or when
	// the caller asks (--worktree): one Claude Code, worktrunk or a plain
	// git worktree add made belongs to that tool.
	dropTree := !isMain && !a.KeepWorktree && (a.RemoveWorktree || e.madeWorktree(rec))
	repo, err := checkRemoveTree(ctx, rec, dropTree, a.Force)
	if err != nil {
		return nil, err
	}
	plan, err := e.planDestroy(ctx, rec, a.Env, a.Force)
	if err != nil {
		return nil, err
	}
	defer plan.close()
	if plan.record != nil {
		if err := e.saveRemovePlan(rec, plan.record); err != nil {
			return nil, api.Errorf(api.CodeFailed, "record what remove needs to finish, before it deletes anything: %w", err)
		}
	}

	// 2. the intent, then the processes.
	out := Summary(rec)
	var left []string
	if err := e.stopWorld(ctx, s, rec, state.WorldRemoving, state.WorldRemoving); err != nil {
		// --force goes on once the intent is recorded, naming what it
		// could not stop.
		if !a.Force || !e.intentRecorded(ctx, rec) {
			return nil, err
		}
		left = append(left, "processes: "+e.redact.String(err.Error()))
		s.Progress("left", "", "processes the stop could not end (see the end of this remove)")
	}
	// 2b. [worktree] teardown, in the worktree, while it is still there.
	if err := e.teardown(ctx, s, rec, a.Env); err != nil {
		if !a.Force {
			return nil, err
		}
		left = append(left, "teardown: "+e.redact.String(err.Error()))
		s.Progress("left", "", "what [worktree] teardown was to undo (it failed)")
	}
	// 3. the worktree before the slices: a worktree that will not go keeps
	// its data too (--force drops the slices all the same, and says the
	// worktree is left).
	if err := e.removeTree(ctx, s, rec, repo, a, dropTree, isMain); err != nil {
		if !a.Force {
			return nil, err
		}
		left = append(left, "worktree "+rec.Path+": "+e.redact.String(err.Error()))
		s.Progress("left", "", "worktree "+rec.Path+" (git would not remove it)")
	}
	// 4. the slices, each forgotten once destroyed.
	gone, err := e.destroySlices(ctx, s, rec, plan, a.Force)
	if err != nil {
		return nil, err
	}
	out.Left = append(left, gone...)
	// 5. the ports, logs, cgroup, warm record and the record itself.
	if err := e.forgetWorld(ctx, rec); err != nil {
		return nil, err
	}
	return out, nil
}

// intentRecorded reports whether rec is recorded as being removed: a stop
// that failed after that point may be gone past by remove --force.
func (e *Engine) intentRecorded(ctx context.Context, rec *registry.Worktree) bool {
	fresh, err := e.reg.WorktreeByID(ctx, rec.ID)
	return err == nil && fresh.State == state.WorldRemoving
}

// checkRemoveTree opens the repository of rec's worktree, when it is still
// there, and, when the worktree goes with the world (dropTree), checks
// that git will let it go: no uncommitted changes unless force, no lock.
// The repository is nil when the worktree is gone.
func checkRemoveTree(ctx context.Context, rec *registry.Worktree, dropTree, force bool) (*worktree.Repo, error) {
	if _, statErr := os.Stat(rec.Path); statErr != nil {
		return nil, nil
	}
	repo, err := worktree.Open(ctx, rec.Path)
	if err != nil {
		return nil, api.Wrap(api.CodeInvalid, err)
	}
	if dropTree {
		if err := repo.CheckRemove(ctx, rec.Path, force); err != nil {
			var de *worktree.DirtyError
			if errors.As(err, &de) {
				return nil, api.Errorf(api.CodeConflict, "worktree %s has uncommitted changes; commit or stash them, or pass --force to lose them:\n  %s", rec.Path, joinLines(de.Changes, 20))
			}
			return nil, api.Errorf(api.CodeConflict, "%w (nothing was removed)", err)
		}
	}
	return repo, nil
}

// removeTree removes rec's git worktree when it goes with the world
// (dropTree), under its repository's lock, or says why it is kept.
func (e *Engine) removeTree(ctx context.Context, s Progress, rec *registry.Worktree, repo *worktree.Repo, a api.RemoveArgs, dropTree, isMain bool) error {
	if repo != nil && !dropTree && !isMain {
		why := "binky did not make it; --worktree removes it too"
		if a.KeepWorktree {
			why = "the tool that asked removes it"
		}
		s.Progress("worktree", "", "keep "+rec.Path+" ("+why+")")
	}
	if repo != nil && dropTree {
		s.Progress("worktree", "", "remove "+rec.Path)
		m := e.repoLock(repo.Root)
		err := m.Lock(ctx, s, "remove", rec.Name)
		if err == nil {
			err = repo.Remove(ctx, rec.Path, a.Force)
			m.Unlock()
		}
		if err != nil {
			return api.Errorf(api.CodeConflict, "%w (its processes are stopped and its slices kept; run remove again)", err)
		}
	}
	return nil
}

// forgetWorld is remove's last step, once the slices are gone: the world's
// port block, logs, cgroup and warm record go, then its record.
func (e *Engine) forgetWorld(ctx context.Context, rec *registry.Worktree) error {
	if lo, hi, err := e.ports.Block(ctx, rec.Project, rec.Name); err == nil && lo > 0 {
		if _, _, err := e.ports.Release(ctx, rec.Project, rec.Name); err != nil {
			return err
		}
		e.events.Emit(events.Event{Event: events.PortsReleased, Project: rec.Project, Worktree: rec.Name, PortLo: lo, PortHi: hi})
	}
	os.RemoveAll(e.logDir(rec.Project, rec.Name))
	e.dropRemovePlan(rec)
	e.cgroups.Remove(rec.Project, rec.Name)
	if err := warm.NewStore(e.home).Delete(rec.Project, rec.Name); err != nil {
		e.log.Warn("forget the removed world's warm record", "world", rec.Name, "error", err)
	}
	if err := e.reg.DeleteWorktree(ctx, rec.ID); err != nil {
		return err
	}
	e.routes.Refresh(ctx)
	e.events.Emit(events.Event{Event: events.WorktreeRemoved, Project: rec.Project, Worktree: rec.Name})
	return nil
}

// destroyPlan is what remove needs to drop a world's slices, gathered before
// anything is destroyed.
type destroyPlan struct {
	items []destroyItem
	// record is what Remove records before it deletes anything, when this
	// plan resolved a slice the recorded one lacked (nil: nothing new).
	record *removePlan
}

type destroyItem struct {
	service, adapter string
	conn             AdapterConn // nil when openErr says why it could not be opened
	target           sdk.Target
	openErr          error
}

func (p *destroyPlan) close() {
	for _, it := range p.items {
		if it.conn != nil {
			it.conn.Close()
		}
	}
}

// planDestroy gives, for each slice the registry records, its adapter,
// its target and an open adapter connection. The targets come from the
// plan an earlier remove of the world recorded, when there is one: a
// retry never needs the worktree's binky.toml or env files, which may have
// gone with it. The slices that plan lacks are resolved now (admin_url
// rendered with the caller's ${env.*}) and recorded before anything is
// destroyed. Any error here is a refusal: nothing changed yet. With force,
// a slice that cannot be resolved or whose adapter cannot be opened is
// planned as left, and said to be.
func (e *Engine) planDestroy(ctx context.Context, rec *registry.Worktree, callerEnv map[string]string, force bool) (*destroyPlan, error) {
	plan := &destroyPlan{}
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	var slices []*registry.Service
	for _, sv := range svcs {
		if sv.Kind == registry.KindAdapter {
			slices = append(slices, sv)
		}
	}
	if len(slices) == 0 {
		return plan, nil
	}
	nothing := " (nothing was removed)"
	if rec.State == state.WorldRemoving {
		nothing = ""
	}
	// Only a remove that already started (state removing) may have
	// deleted something the plan needs; before that, the plan is worked
	// out afresh, so a refused remove leaves nothing behind that a fixed
	// binky.toml or env file would not override.
	var rp *removePlan
	if rec.State == state.WorldRemoving {
		rp, err = e.loadRemovePlan(rec)
		if err != nil && !force {
			return nil, api.Errorf(api.CodeInvalid, "%w (remove --force forgets its slices and says where they are left)", err)
		}
	}
	if rp == nil {
		rp = &removePlan{}
	}
	have := map[string]bool{}
	for _, rs := range rp.Slices {
		have[rs.Service] = true
	}
	var missing []*registry.Service
	for _, sv := range slices {
		if !have[sv.Name] {
			missing = append(missing, sv)
		}
	}
	if len(missing) > 0 {
		more, err := e.resolveSlices(ctx, rec, missing, callerEnv)
		if err != nil {
			if !force {
				return nil, api.Errorf(api.CodeInvalid, "%w%s", err, nothing)
			}
			more = unresolvedSlices(rec.Project, missing, err)
		}
		rp.Slices = append(rp.Slices, more.Slices...)
		rp.Secrets = append(rp.Secrets, more.Secrets...)
		plan.record = rp
	}
	for _, v := range rp.Secrets {
		e.redact.Add(v)
	}
	recorded := map[string]recordedSlice{}
	for _, rs := range rp.Slices {
		recorded[rs.Service] = rs
	}
	for _, sv := range slices {
		rs := recorded[sv.Name]
		if rs.Unresolved != "" {
			plan.items = append(plan.items, destroyItem{service: sv.Name, adapter: rs.Adapter, target: rs.Target, openErr: errors.New(rs.Unresolved)})
			continue
		}
		conn, err := e.openAdapter(ctx, &config.Service{Name: sv.Name, Adapter: rs.Adapter, Timeout: rs.Timeout})
		if err != nil {
			if force {
				// --force: a slice whose adapter is gone is forgotten, and
				// said to be left behind.
				plan.items = append(plan.items, destroyItem{service: sv.Name, adapter: rs.Adapter, target: rs.Target, openErr: err})
				continue
			}
			plan.close()
			return nil, api.Errorf(api.CodeInvalid, "%w%s; remove --force forgets the slice and says where it is left", err, nothing)
		}
		plan.items = append(plan.items, destroyItem{service: sv.Name, adapter: rs.Adapter, conn: conn, target: rs.Target})
	}
	return plan, nil
}

// resolveSlices renders, for each of slices, the target remove destroys:
// the service as binky.toml has it now, else as it was recorded with the
// slice (a service removed from binky.toml, or one whose adapter changed,
// still names its server), with its admin_url and config rendered.
func (e *Engine) resolveSlices(ctx context.Context, rec *registry.Worktree, slices []*registry.Service, callerEnv map[string]string) (*removePlan, error) {
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, fmt.Errorf("read the world's config to find its adapters: %w", err)
	}
	svcOf := map[string]*config.Service{}
	src := adapterStrings{cfg: cfg}
	for _, sv := range slices {
		svc, ok := cfg.Services[sv.Name]
		if !ok || !svc.IsAdapter() || (sv.Adapter != "" && sv.Adapter != svc.Adapter) {
			rs, err := recordedService(sv)
			if err != nil {
				return nil, err
			}
			svc = rs
			src.extra = append(src.extra, svc.AdminURL)
			for _, v := range svc.Config {
				if s, ok := v.(string); ok {
					src.extra = append(src.extra, s)
				}
			}
		}
		svcOf[sv.Name] = svc
	}
	envVals, err := resolveEnvOf(src, cfg, rec.Path, callerEnv)
	if err != nil {
		return nil, err
	}
	out := &removePlan{Secrets: e.addSecrets(cfg, envVals)}
	w := &world{cfg: cfg, project: rec.Project, worktree: rec.Name, path: rec.Path, env: envVals, slices: map[string]slice{}}
	coords := w.coords()
	for _, sv := range slices {
		svc := svcOf[sv.Name]
		adapterName := svc.Adapter
		if sv.Adapter != "" {
			adapterName = sv.Adapter
		}
		name := sv.Slice
		if name == "" {
			name = e.sliceName(ctx, cfg, rec.Name, svc)
		}
		s2 := *svc
		s2.Adapter = adapterName
		out.Slices = append(out.Slices, recordedSlice{Service: sv.Name, Adapter: adapterName, Timeout: svc.Timeout, Target: e.target(w, &s2, name, coords)})
	}
	return out, nil
}

// unresolvedSlices plans each of slices as left: a remove --force that
// could not render their targets (why) still forgets them, naming them.
func unresolvedSlices(project string, slices []*registry.Service, why error) *removePlan {
	out := &removePlan{}
	for _, sv := range slices {
		name := sv.Slice
		if name == "" {
			name = sv.Name
		}
		t := sdk.Target{Slice: name, Project: project}
		if sv.Admin != "-" && !strings.Contains(sv.Admin, "${") {
			t.AdminURL = sv.Admin // only serverOf reads it: scheme, host and port
		}
		out.Slices = append(out.Slices, recordedSlice{Service: sv.Name, Adapter: sv.Adapter, Target: t, Unresolved: "its server could not be worked out: " + why.Error()})
	}
	return out
}

// recordedService is an adapter service as it was recorded with its slice
// (adapter, admin_url and config as binky.toml wrote them).
func recordedService(sv *registry.Service) (*config.Service, error) {
	if sv.Adapter == "" {
		return nil, fmt.Errorf("service %s has a slice, but neither binky.toml nor the record says which adapter made it; restore the service in binky.toml, or drop the slice by hand", sv.Name)
	}
	svc := &config.Service{Name: sv.Name, Adapter: sv.Adapter}
	if sv.Admin != "-" {
		svc.AdminURL = sv.Admin
	}
	if sv.Config != "" {
		if err := json.Unmarshal([]byte(sv.Config), &svc.Config); err != nil {
			return nil, fmt.Errorf("read the recorded config of %s's slice: %w", sv.Name, err)
		}
	}
	return svc, nil
}

// adapterStrings is the token source of cfg's adapter services alone: what
// destroying their slices renders (admin_url, config).
type adapterStrings struct {
	cfg   *config.Config
	extra []string // recorded admin_url and config strings of slices whose service left cfg
}

func (a adapterStrings) TokenStrings() []string {
	cfg := a.cfg
	out := append([]string(nil), a.extra...)
	for _, name := range cfg.Order {
		svc := cfg.Services[name]
		if !svc.IsAdapter() {
			continue
		}
		out = append(out, svc.AdminURL)
		for _, v := range svc.Config {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// destroySlices drops each planned slice and forgets it, so a remove cut
// short and run again destroys only what is left. With force, a slice that
// cannot be destroyed (server unreachable, adapter gone or refusing) is
// forgotten too, and each one is returned as what was left on which
// server, so nothing is orphaned silently.
func (e *Engine) destroySlices(ctx context.Context, s Progress, rec *registry.Worktree, plan *destroyPlan, force bool) ([]string, error) {
	var left []string
	for _, it := range plan.items {
		s.Progress("destroy", it.service, it.target.Slice)
		err := it.openErr
		if err == nil {
			_, err = it.conn.Destroy(ctx, &sdk.DestroyRequest{Target: it.target})
		}
		owner, foreign := otherHome(err)
		if err != nil && !force {
			if foreign {
				return nil, api.Errorf(api.CodeConflict, "destroy %s slice %q of %s: %s (remove --force forgets it in this home and leaves it to its owner)", it.adapter, it.target.Slice, it.service, foreignSlice(owner))
			}
			return nil, api.Errorf(api.CodeFailed, "destroy %s slice %q of %s: %w (run remove again to finish, or remove --force to forget it and be told where it is left)", it.adapter, it.target.Slice, it.service, err)
		}
		if err != nil {
			where := serverOf(it.target)
			msg := fmt.Sprintf("%s slice %q of %s on %s", it.adapter, it.target.Slice, it.service, where)
			if foreign {
				// Not this home's to drop, nor the user's: its owner's
				// world uses it.
				left = append(left, msg+": "+foreignSlice(owner))
				s.Progress("left", it.service, msg+" ("+foreignSlice(owner)+")")
			} else {
				left = append(left, msg+": "+e.redact.String(err.Error())+"; drop it by hand")
				s.Progress("left", it.service, msg+" (could not be destroyed; drop it by hand)")
			}
			e.events.Emit(events.Event{Event: events.SliceLeft, Project: rec.Project, Worktree: rec.Name, Service: it.service, Adapter: it.adapter, Detail: msg, Error: err.Error()})
			if derr := e.reg.DeleteService(ctx, rec.ID, it.service); derr != nil {
				return left, fmt.Errorf("forget the slice of %s: %w", it.service, derr)
			}
			continue
		}
		if err := e.reg.DeleteService(ctx, rec.ID, it.service); err != nil {
			return left, fmt.Errorf("forget the destroyed slice of %s: %w", it.service, err)
		}
		e.events.Emit(events.Event{Event: events.SliceDestroyed, Project: rec.Project, Worktree: rec.Name, Service: it.service, Adapter: it.adapter})
	}
	return left, nil
}

// otherHome reads, out of a destroy's refusal, the binky home that owns
// the slice: an adapter refuses another home's slice with CodeConflict and
// the words of sdk.Target.CheckClaim, "… belongs to another binky home,
// <owner> (<label>), not to this one …". owner is "<owner> (<label>)" as
// the adapter wrote it (the label: that home's directory and uid).
func otherHome(err error) (owner string, ok bool) {
	if err == nil || sdk.CodeOf(err) != sdk.CodeConflict {
		return "", false
	}
	const mark, end = "belongs to another binky home, ", ", not to this one"
	_, rest, found := strings.Cut(err.Error(), mark)
	if !found {
		return "", false
	}
	owner, _, found = strings.Cut(rest, end)
	if !found || owner == "" {
		return "", false
	}
	return owner, true
}

// foreignSlice says what is true of a slice another binky home owns.
func foreignSlice(owner string) string {
	return "it belongs to another binky home, " + owner + ", and is in use by it; binky left it alone"
}

// serverOf names where a slice lives, with no credential: the admin URL's
// scheme, host and port, or the adapter's data directory.
func serverOf(t sdk.Target) string {
	if t.AdminURL != "" {
		if srv := golden.Server(t.AdminURL); srv != "" {
			return srv
		}
		return "the server of its admin_url"
	}
	if t.DataDir != "" {
		return t.DataDir
	}
	return "its server"
}

func Summary(rec *registry.Worktree) *api.World {
	return &api.World{Project: rec.Project, Worktree: rec.Name, Branch: rec.Branch, Path: rec.Path, Repo: rec.Repo, State: rec.State, Reason: rec.Reason}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func joinLines(lines []string, n int) string {
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf("\n  … and %d more", len(lines)-n)
		lines = lines[:n]
	}
	return strings.Join(lines, "\n  ") + more
}
