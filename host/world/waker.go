package world

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
)

// wakeStartLimit bounds the start of a woken down world once admitted.
const wakeStartLimit = 10 * time.Minute

// Waker is the engine seen as the proxy's waker (proxy.Waker): wake on
// request passes through admission like an up.
type Waker Engine

// Waker is the engine's proxy.Waker.
func (e *Engine) Waker() *Waker { return (*Waker)(e) }

// Wakeable: a suspended world, or a down one whose project sets wake = true.
func (w *Waker) Wakeable(project, worktree string) bool {
	e := (*Engine)(w)
	if e.adm == nil {
		return false
	}
	if _, ok := e.adm.Suspended(Key(project, worktree)); ok {
		return true
	}
	rec, err := e.reg.Worktree(context.Background(), project, worktree)
	if err != nil || rec.State != state.WorldDown {
		return false
	}
	cfg, err := e.Config(rec)
	return err == nil && cfg.Project.Wake
}

// WakeNote says why a suspended world is not running (proxy.WakeNoter):
// under pressure it resumes only once free RAM is back above the reserve.
func (w *Waker) WakeNote(project, worktree string) string {
	e := (*Engine)(w)
	if e.adm == nil {
		return ""
	}
	why, ok := e.adm.Suspended(Key(project, worktree))
	switch {
	case !ok:
		return ""
	case why == admission.WhyPressure:
		return fmt.Sprintf("suspended to relieve memory pressure; it resumes when free RAM is back above the %s%% reserve (binky reserve), or at binky up %s",
			strconv.FormatFloat(e.bounds.Limits().RAMReserve, 'f', -1, 64), worktree)
	default:
		return "" // idle: this request resumes it now; the page says starting
	}
}

// Touch records a proxied request for idle_suspend.
func (w *Waker) Touch(project, worktree string) {
	if e := (*Engine)(w); e.adm != nil {
		e.adm.Touch(Key(project, worktree))
	}
}

// Wake resumes a suspended world, or starts a down one from the run specs
// its last up recorded (the environment of the caller of that up: a wake
// has no caller of its own). Either way it passes through admission. ctx
// ends when no client waits for the wake any more: a wake still queued
// then leaves the queue at once; one already admitted finishes its start
// (a world half started would help nobody).
func (w *Waker) Wake(ctx context.Context, project, worktree string) error {
	e := (*Engine)(w)
	rec, err := e.reg.Worktree(ctx, project, worktree)
	if err != nil {
		return err
	}
	cfg, err := e.Config(rec)
	if err != nil {
		return err
	}
	key := Key(project, worktree)
	if _, err := e.adm.Acquire(ctx, key, projectLimits(cfg), false, nil); err != nil {
		return err
	}
	defer e.adm.Done(key)
	if rec.State == state.WorldSuspended {
		e.events.Emit(events.Event{Event: events.WorldWoken, Project: project, Worktree: worktree, Detail: "resumed"})
		return nil // Acquire resumed it
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wakeStartLimit)
	defer cancel()
	if err := e.WakeStart(sctx, cfg, rec); err != nil {
		e.released(project, worktree)
		return err
	}
	e.adm.SetIdle(key, cfg.Project.IdleSuspend)
	e.events.Emit(events.Event{Event: events.WorldWoken, Project: project, Worktree: worktree, Detail: "started"})
	return nil
}

var (
	_ proxy.Waker     = (*Waker)(nil)
	_ proxy.WakeNoter = (*Waker)(nil)
)
