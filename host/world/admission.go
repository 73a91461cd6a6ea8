package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/worktree"
)

// Admission, as the worlds live it: the queue an up waits in (admit, step
// 3 of up), the place a world gives back when it no longer runs
// (released), the suspend and resume admission decides (the controller's
// hooks), the worlds an earlier daemon left queued, and `binky reserve`.
// The daemon builds the controller (host/admission) and hands it over
// (StartAdmission); an engine without one admits every world at once.

// QueueFile (in BINKY_HOME) records the worlds waiting in the queue.
const QueueFile = "admission-queue.json"

// StartAdmission hands the engine the admission queue an up waits in and
// gives its place back to (unless Options.AdmissionOff), with the
// machine's bounds, before adm runs: the worlds an earlier daemon left
// queued are settled, and every world that runs holds its place, in the
// order they were recorded.
func (e *Engine) StartAdmission(ctx context.Context, adm *admission.Controller, bounds *admission.Bounds) {
	e.adm, e.bounds = adm, bounds
	e.queue = &admission.Journal{Path: filepath.Join(e.home, QueueFile)}
	e.settleLeftQueued(ctx)
	// The binky runs an earlier daemon journaled (runs.go) take their
	// places again before anyone is served.
	defer e.ResumeRuns(ctx)
	recs, err := e.reg.Worktrees(ctx)
	if err != nil {
		return
	}
	for _, rec := range recs {
		switch rec.State {
		case state.WorldUp, state.WorldStarting, state.WorldSuspended:
			key := Key(rec.Project, rec.Name)
			adm.Hold(key, rec.State == state.WorldSuspended)
			if cfg, err := e.Config(rec); err == nil {
				adm.SetIdle(key, cfg.Project.IdleSuspend)
				e.armAdopted(rec, cfg)
			}
		}
	}
}

// settleLeftQueued marks down, with the reason, each world an earlier
// daemon left waiting in the queue: its caller went with that daemon (a
// caller that comes back queues again). A world recorded up or suspended
// meanwhile is left as it is; one never recorded is recorded down, so
// status shows what became of it. Nothing is left starting.
func (e *Engine) settleLeftQueued(ctx context.Context) {
	left, err := e.queue.Take()
	if err != nil {
		e.log.Warn("read the queue an earlier daemon left", "error", err)
	}
	for _, q := range left {
		var w registry.Worktree
		if err := json.Unmarshal(q.Data, &w); err != nil || w.Project == "" || w.Name == "" {
			e.log.Warn("a recorded queued world is unreadable; skipped", "world", q.Key)
			continue
		}
		reason := fmt.Sprintf("was queued (since %s) when the daemon stopped; its caller went with it: run binky up %s again", q.Since.Local().Format("15:04:05"), w.Name)
		rec, err := e.reg.Worktree(ctx, w.Project, w.Name)
		if err != nil {
			w.State = state.WorldDown
			if rec, err = e.reg.UpsertWorktree(ctx, &w); err != nil {
				e.log.Warn("record a world left queued", "world", q.Key, "error", err)
				continue
			}
		}
		switch rec.State {
		case state.WorldUp, state.WorldSuspended, state.WorldDegraded:
			continue // it holds its place
		}
		if err := e.reg.SetWorktreeStateReason(ctx, rec.ID, state.WorldDown, reason); err != nil {
			e.log.Warn("mark down a world left queued", "world", q.Key, "error", err)
			continue
		}
		e.log.Info("a world left queued by an earlier daemon is down", "world", q.Key)
	}
}

// projectLimits are a project's own bounds. The controller applies them
// with the machine's as they are at each decision: the project's
// max_parallel counts its own worlds, the machine's all of them.
func projectLimits(cfg *config.Config) admission.Limits {
	return admission.Limits{
		MaxParallel: cfg.Project.MaxParallel, RAMReserve: cfg.Project.RAMReserve, DiskHeadroom: cfg.Project.DiskHeadroom,
	}
}

// admit is step 3 of up: the world waits in the admission queue until it
// may run, showing its place and the reason as progress. A caller that
// hangs up leaves the queue. With noWait it fails at once instead.
func (e *Engine) admit(ctx context.Context, s Progress, cfg *config.Config, w *registry.Worktree, noWait bool) error {
	if e.admOff || e.adm == nil {
		return nil
	}
	project, wt := w.Project, w.Name
	key := Key(project, wt)
	wctx, cancel := UntilGone(ctx, s)
	defer cancel()
	queuedAt := time.Time{}
	resumed, err := e.adm.Acquire(wctx, key, projectLimits(cfg), noWait, func(q admission.Wait) {
		if queuedAt.IsZero() {
			queuedAt = time.Now()
			e.events.Emit(events.Event{Event: events.WorldQueued, Project: project, Worktree: wt, Detail: q.Reason})
			if err := e.queue.Add(key, w); err != nil {
				e.log.Warn("record a queued world", "world", key, "error", err)
			}
		}
		s.Progress("queued", "", fmt.Sprintf("position %d: %s", q.Position, q.Reason))
	})
	if !queuedAt.IsZero() {
		e.queue.Remove(key)
	}
	var refused *admission.Refused
	switch {
	case errors.As(err, &refused):
		e.events.Emit(events.Event{Event: events.WorldRefused, Project: project, Worktree: wt, Detail: refused.Reason})
		return api.Errorf(api.CodeConflict, "%s cannot start now: %s (run up without --no-wait to queue, or make room: binky down another world, or binky reserve)", wt, refused.Reason)
	case err != nil:
		return api.Wrap(api.CodeFailed, err)
	}
	if !queuedAt.IsZero() {
		e.events.Emit(events.Event{Event: events.WorldAdmitted, Project: project, Worktree: wt, Detail: "waited " + time.Since(queuedAt).Round(time.Millisecond).String()})
		s.Progress("admitted", "", "")
	}
	if resumed {
		s.Progress("resumed", "", "")
	}
	return nil
}

// released gives a world's place back once it no longer runs (down,
// remove, a failed up); the next queued up is admitted.
func (e *Engine) released(project, wt string) {
	if e.adm != nil && !e.admOff {
		e.adm.Release(Key(project, wt))
	}
}

// beforeStop continues a suspended world before down or remove stops it: a
// stopped process does not act on SIGTERM until continued.
func (e *Engine) beforeStop(ctx context.Context, rec *registry.Worktree) {
	if e.adm == nil || rec.State != state.WorldSuspended {
		return
	}
	if err := e.Pause(ctx, rec, false); err != nil {
		e.log.Warn("continue a suspended world before stopping it", "world", rec.Name, "error", err)
	}
}

// SuspendKey is the controller's Suspend hook: the world of key is
// suspended, with the reason admission recorded for it.
func (e *Engine) SuspendKey(key string) error {
	project, wt := admission.SplitKey(key)
	why, _ := e.adm.Suspended(key)
	return e.Suspend(context.Background(), project, wt, why)
}

// ResumeKey is the controller's Resume hook (and up on a suspended
// world's): the world of key is continued.
func (e *Engine) ResumeKey(key string) error {
	project, wt := admission.SplitKey(key)
	return e.Resume(context.Background(), project, wt)
}

// ActivityKey is the controller's Activity hook: the proxied connections
// open to the world of key, and when the last closed (Routes.Activity).
func (e *Engine) ActivityKey(key string) (open int, ended time.Time) {
	project, wt := admission.SplitKey(key)
	return e.routes.Activity(project, wt, "")
}

// LiveKey is the controller's Live hook: whether the world of key has a
// process running (suspending a world with none frees nothing).
func (e *Engine) LiveKey(key string) bool {
	project, wt := admission.SplitKey(key)
	return e.Live(project, wt)
}

// Reserve sets the machine's admission bounds (`binky reserve`, persisted
// in the registry) and reports every bound with where it comes from, the
// project's own where the caller stands in one, and the pressure. Every
// waiter is judged by the new bounds at once.
func (e *Engine) Reserve(ctx context.Context, a api.ReserveArgs, _ Progress) (*api.ReserveResult, error) {
	if e.bounds == nil {
		return nil, api.Errorf(api.CodeFailed, "admission is not running in this daemon")
	}
	if err := e.bounds.Reserve(ctx, a); err != nil {
		return nil, err
	}
	if e.adm != nil {
		e.adm.Recheck()
		e.adm.Kick()
	}
	res := &api.ReserveResult{Values: e.bounds.Values()}
	// The project the caller stands in can lower them for itself.
	if a.Dir != "" {
		if repo, err := worktree.Open(ctx, a.Dir); err == nil {
			file := filepath.Join(repo.Root, "binky.toml")
			if cfg, err := LoadConfigContext(ctx, file); err == nil {
				own := []float64{float64(cfg.Project.MaxParallel), cfg.Project.RAMReserve, cfg.Project.DiskHeadroom}
				for i, v := range own {
					if v != 0 {
						res.Values[i].Project, res.Values[i].ProjectFile = v, file
					}
				}
			}
		}
	}
	if e.adm != nil {
		res.Pressure = e.adm.Pressure()
	}
	return res, nil
}
