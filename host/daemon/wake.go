package daemon

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/world"
)

// wakeStartLimit bounds the start of a woken down world once admitted.
const wakeStartLimit = 10 * time.Minute

// waker is the daemon's side of wake on request (proxy.Waker).
type waker struct{ d *Daemon }

// Wakeable: a suspended world, or a down one whose project sets wake = true.
func (w waker) Wakeable(project, worktree string) bool {
	d := w.d
	if d.adm == nil {
		return false
	}
	if _, ok := d.adm.Suspended(world.Key(project, worktree)); ok {
		return true
	}
	rec, err := d.reg.Worktree(context.Background(), project, worktree)
	if err != nil || rec.State != state.WorldDown {
		return false
	}
	cfg, err := d.w.Config(rec)
	return err == nil && cfg.Project.Wake
}

// WakeNote says why a suspended world is not running (proxy.WakeNoter):
// under pressure it resumes only once free RAM is back above the reserve.
func (w waker) WakeNote(project, worktree string) string {
	d := w.d
	if d.adm == nil {
		return ""
	}
	why, ok := d.adm.Suspended(world.Key(project, worktree))
	switch {
	case !ok:
		return ""
	case why == admission.WhyPressure:
		return fmt.Sprintf("suspended to relieve memory pressure; it resumes when free RAM is back above the %s%% reserve (binky reserve), or at binky up %s",
			strconv.FormatFloat(d.limits.get().RAMReserve, 'f', -1, 64), worktree)
	default:
		return "" // idle: this request resumes it now; the page says starting
	}
}

// Touch records a proxied request for idle_suspend.
func (w waker) Touch(project, worktree string) {
	if w.d.adm != nil {
		w.d.adm.Touch(world.Key(project, worktree))
	}
}

// Wake resumes a suspended world, or starts a down one from the run specs
// its last up recorded (the environment of the caller of that up: a wake
// has no caller of its own). Either way it passes through admission. ctx
// ends when no client waits for the wake any more: a wake still queued
// then leaves the queue at once; one already admitted finishes its start
// (a world half started would help nobody).
func (w waker) Wake(ctx context.Context, project, worktree string) error {
	d := w.d
	rec, err := d.reg.Worktree(ctx, project, worktree)
	if err != nil {
		return err
	}
	cfg, err := d.w.Config(rec)
	if err != nil {
		return err
	}
	key := world.Key(project, worktree)
	if _, err := d.adm.Acquire(ctx, key, d.projectLimits(cfg), false, nil); err != nil {
		return err
	}
	defer d.adm.Done(key)
	if rec.State == state.WorldSuspended {
		d.emit(events.Event{Event: events.WorldWoken, Project: project, Worktree: worktree, Detail: "resumed"})
		return nil // Acquire resumed it
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wakeStartLimit)
	defer cancel()
	if err := d.w.WakeStart(sctx, cfg, rec); err != nil {
		d.released(project, worktree)
		return err
	}
	d.adm.SetIdle(key, cfg.Project.IdleSuspend)
	d.emit(events.Event{Event: events.WorldWoken, Project: project, Worktree: worktree, Detail: "started"})
	return nil
}

var (
	_ proxy.Waker     = waker{}
	_ proxy.WakeNoter = waker{}
)
