package world

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// What a killed daemon leaves behind, and how the next one converges on
// it. Every step that starts a process or changes a server records its
// intent first: a slice is recorded "provisioning" before it is made or
// reset, a golden template "building" before it is built, and one-shot
// runs (migrate, seed, setup, verify) carry their world's marker with
// "#<step>". At start the daemon ends the runs nobody waits for any more
// and marks the worlds whose slices were cut short degraded; the next up
// rebuilds those slices and restarts what depends on them.

// hookStopGrace is how long a left-over run gets after SIGTERM.
const hookStopGrace = 5 * time.Second

// endLeftHooks ends the one-shot runs of this home's worlds that a killed
// daemon left running: no one waits for them, and the next run of the
// same step would race them (two migrations, two `pnpm install` in one
// tree). Each is reported as hook_ended, by world, service and step.
func (e *Engine) endLeftHooks() {
	prefix := e.homeID + "/" // every world of this home (supervisor.WorldMarker)
	byMarker := map[string][]int{}
	for pid, m := range supervisor.HookRuns(prefix) {
		byMarker[m] = append(byMarker[m], pid)
	}
	markers := make([]string, 0, len(byMarker))
	for m := range byMarker {
		markers = append(markers, m)
	}
	sort.Strings(markers)
	for _, m := range markers {
		pids := byMarker[m]
		sort.Ints(pids)
		left := supervisor.EndMarked(m, syscall.SIGTERM, hookStopGrace)
		project, worktree, service, step := splitHookMarker(strings.TrimPrefix(m, prefix))
		ev := events.Event{Event: events.HookEnded, Project: project, Worktree: worktree, Service: service,
			Detail: fmt.Sprintf("%s left running by the previous daemon, pid %s", step, joinInts(pids))}
		if len(left) > 0 {
			ev.Error = "still alive after SIGKILL: pid " + joinInts(left)
		}
		e.events.Emit(ev)
		e.log.Warn("ended a run the previous daemon left", "world", project+"/"+worktree, "service", service, "step", step, "pids", pids, "left", left)
	}
}

// splitHookMarker reads "<project>/<worktree>/<service>#<step>".
func splitHookMarker(m string) (project, worktree, service, step string) {
	parts := strings.SplitN(m, "/", 3)
	if len(parts) == 3 {
		project, worktree = parts[0], parts[1]
		service, step, _ = strings.Cut(parts[2], "#")
	}
	return project, worktree, service, step
}

// endPriorRun ends a run of one step that an earlier daemon left (the
// start-up sweep ends them too; this covers a run that outlived it), and
// says so through progress.
func (e *Engine) endPriorRun(s Progress, rec *registry.Worktree, service, step string) error {
	marker := supervisor.HookMarker(e.homeID, rec.Project, rec.Name, service, step)
	pids := supervisor.MarkedProcesses(marker)
	if len(pids) == 0 {
		return nil
	}
	if s != nil {
		s.Progress(step, service, fmt.Sprintf("ending the %s an earlier daemon left running (pid %s) before starting it again", step, joinInts(pids)))
	}
	left := supervisor.EndMarked(marker, syscall.SIGTERM, hookStopGrace)
	ev := events.Event{Event: events.HookEnded, Project: rec.Project, Worktree: rec.Name, Service: service,
		Detail: fmt.Sprintf("%s left running by an earlier daemon, pid %s", step, joinInts(pids))}
	if len(left) > 0 {
		ev.Error = "still alive: pid " + joinInts(left)
		e.events.Emit(ev)
		return fmt.Errorf("an earlier %s of %s (pid %s) is still running and would not stop", step, service, joinInts(left))
	}
	e.events.Emit(ev)
	return nil
}

// markInterrupted marks degraded each world that was up while one of its
// slices was being made or reset when the daemon died (its record says
// provisioning): the app may be running against a missing or half-cloned
// database. The next up rebuilds the slice and restarts its dependents.
func (e *Engine) markInterrupted(ctx context.Context, rec *registry.Worktree, svcs []*registry.Service) {
	if !rec.State.Serving() {
		return
	}
	var cut []string
	for _, sv := range svcs {
		if sv.Kind == registry.KindAdapter && sv.State == state.ServiceProvisioning {
			cut = append(cut, sv.Name)
			e.events.Emit(events.Event{Event: events.SliceInterrupted, Project: rec.Project, Worktree: rec.Name, Service: sv.Name, Adapter: sv.Adapter, Detail: sv.Slice})
		}
	}
	if len(cut) == 0 {
		return
	}
	reason := fmt.Sprintf("the slice of %s was being rebuilt (reset) when the daemon stopped; binky up rebuilds it and restarts what depends on it", strings.Join(cut, ", "))
	if err := e.reg.SetWorktreeStateReason(ctx, rec.ID, state.WorldDegraded, reason); err != nil {
		e.log.Warn("record a degraded world", "world", rec.Name, "error", err)
		return
	}
	rec.State, rec.Reason = state.WorldDegraded, reason
}
