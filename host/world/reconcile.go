package world

import (
	"context"
	"encoding/json"

	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// Reconcile re-adopts, at daemon start, every process the registry says a
// previous daemon started, whatever its world's state: still running with
// the same start time → adopted; pid now someone else's → lost, never
// signalled; died meanwhile → reported, and its restart policy applied once
// only when its world is up. A world caught mid-up by the previous daemon's
// death is marked failed: its up was never acknowledged.
func (e *Engine) Reconcile(ctx context.Context) {
	e.endLeftHooks()
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		e.log.Error("reconcile: read registry", "error", err)
		return
	}
	var adopt []supervisor.Record
	for _, rec := range recs {
		for _, v := range rec.Secrets {
			e.redact.Add(v)
		}
		if rec.State == state.WorldStarting {
			// A registry that takes no writes (a full disk) leaves it
			// starting; RecordLive marks it once it can.
			if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldFailed); err == nil {
				rec.State = state.WorldFailed
				e.events.Emit(events.Event{Event: events.UpFailed, Project: rec.Project, Worktree: rec.Name, Error: "the daemon stopped during up"})
			} else {
				e.log.Warn("reconcile: mark failed a world the previous daemon left mid-up", "world", rec.Project+"/"+rec.Name, "error", err)
				e.unfailedMu.Lock()
				e.unfailed = append(e.unfailed, rec.ID)
				e.unfailedMu.Unlock()
			}
		}
		svcs, err := e.reg.Services(ctx, rec.ID)
		if err != nil {
			continue
		}
		e.markInterrupted(ctx, rec, svcs)
		for _, sv := range svcs {
			if sv.Kind == registry.KindAdapter {
				e.redactSlice(slice{Address: sv.Address, Values: sv.Values})
			}
			if sv.Kind != registry.KindCmd || sv.PID <= 0 || sv.Spec == "" {
				continue
			}
			var spec supervisor.Spec
			if err := json.Unmarshal([]byte(sv.Spec), &spec); err != nil {
				e.log.Warn("reconcile: unreadable spec", "service", sv.Name, "error", err)
				continue
			}
			// A spec recorded before home ids carries none; the marker of
			// what it starts again is this home's.
			spec.Key = e.SupKey(rec.Project, rec.Name, sv.Name)
			adopt = append(adopt, supervisor.Record{
				Key: e.SupKey(rec.Project, rec.Name, sv.Name), Spec: spec,
				Pid: sv.PID, Pgid: sv.PGID, StartTime: sv.StartTime,
				NoRestart: !rec.State.Serving(),
			})
		}
	}
	if len(adopt) == 0 {
		return
	}
	for _, r := range e.sup.Adopt(ctx, adopt) {
		evt := events.Event{Project: r.Key.Project, Worktree: r.Key.Worktree, Service: r.Key.Service, PID: r.Pid}
		switch r.Outcome {
		case supervisor.AdoptAdopted, supervisor.AdoptSkipped:
			continue // the supervisor already emitted service_adopted
		case supervisor.AdoptLost, supervisor.AdoptRestarted, supervisor.AdoptExited:
			continue // reported by the supervisor's own events
		default:
			evt.Event = events.ServiceFailed
		}
		if r.Err != nil {
			evt.Error = r.Err.Error()
		}
		e.events.Emit(evt)
	}
	e.routes.Refresh(ctx)
}

// RecordLive writes to the registry what this daemon learned while the
// registry took no writes (a degraded daemon, its home on a full disk):
// each supervised service's process, or its exit, where the record says
// otherwise; and the worlds Reconcile could not mark failed. What still
// fails is logged.
func (e *Engine) RecordLive(ctx context.Context) {
	e.unfailedMu.Lock()
	unfailed := e.unfailed
	e.unfailed = nil
	e.unfailedMu.Unlock()
	for _, id := range unfailed {
		rec, err := e.reg.WorktreeByID(ctx, id)
		if err != nil || rec.State != state.WorldStarting {
			continue
		}
		if err := e.reg.SetWorktreeState(ctx, id, state.WorldFailed); err != nil {
			e.log.Warn("mark failed a world the previous daemon left mid-up", "world", rec.Project+"/"+rec.Name, "error", err)
			continue
		}
		e.events.Emit(events.Event{Event: events.UpFailed, Project: rec.Project, Worktree: rec.Name, Error: "the daemon stopped during up"})
	}
	type world struct{ project, name string }
	recs := map[world]map[string]*registry.Service{}
	ids := map[world]int64{}
	for _, st := range e.sup.Statuses() {
		k := world{st.Key.Project, st.Key.Worktree}
		svcs, ok := recs[k]
		if !ok {
			if rec, err := e.reg.Worktree(ctx, k.project, k.name); err == nil {
				ids[k] = rec.ID
				if list, err := e.reg.Services(ctx, rec.ID); err == nil {
					svcs = map[string]*registry.Service{}
					for _, sv := range list {
						svcs[sv.Name] = sv
					}
				}
			}
			recs[k] = svcs
		}
		sv := svcs[st.Key.Service]
		if sv == nil {
			continue
		}
		var err error
		switch {
		case st.Pid > 0 && (sv.PID != st.Pid || sv.StartTime != st.StartTime):
			err = e.reg.SetServiceProcess(ctx, ids[k], sv.Name, st.Pid, st.Pgid, st.StartTime, st.State)
		case st.Pid == 0 && sv.PID != 0 && st.LastExit != nil:
			code := st.LastExit.Code
			err = e.reg.SetServiceState(ctx, ids[k], sv.Name, st.State, &code, st.LastExit.Err)
		}
		if err != nil {
			e.log.Warn("record what the supervisor learned while the registry took no writes", "service", st.Key.String(), "error", err)
		}
	}
}
