package world

import (
	"context"
	"errors"
	"fmt"

	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// Suspend stops every process of an up world and records it suspended
// (admission's Suspend hook); why is admission's reason, for the event
// and the log. A world another op is working on is left alone.
func (e *Engine) Suspend(ctx context.Context, project, wt, why string) error {
	key := Key(project, wt)
	m := e.WorldLock(project, wt)
	if !m.TryLock("suspend", wt) {
		return fmt.Errorf("world %s is busy", key)
	}
	defer m.Unlock()
	rec, err := e.reg.Worktree(ctx, project, wt)
	if err != nil {
		return err
	}
	if rec.State != state.WorldUp {
		return fmt.Errorf("world %s is %s, not up", key, rec.State)
	}
	if err := e.Pause(ctx, rec, true); err != nil {
		e.Pause(ctx, rec, false)
		return err
	}
	if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldSuspended); err != nil {
		e.Pause(ctx, rec, false)
		return err
	}
	e.events.Emit(events.Event{Event: events.WorldSuspended, Project: project, Worktree: wt, Detail: why})
	e.log.Info("world suspended", "world", key, "why", why)
	e.routes.Refresh(ctx)
	return nil
}

// Resume continues a suspended world's processes and records it up
// (admission's Resume hook, and up on a suspended world). A world stopped
// or removed meanwhile is left as it is.
func (e *Engine) Resume(ctx context.Context, project, wt string) error {
	key := Key(project, wt)
	m := e.WorldLock(project, wt)
	if err := m.Lock(ctx, nil, "resume", wt); err != nil {
		return err
	}
	defer m.Unlock()
	rec, err := e.reg.Worktree(ctx, project, wt)
	if err != nil {
		return err
	}
	if rec.State != state.WorldSuspended {
		return nil // stopped or removed meanwhile
	}
	if err := e.Pause(ctx, rec, false); err != nil {
		return err
	}
	if err := e.reg.SetWorktreeState(ctx, rec.ID, state.WorldUp); err != nil {
		return err
	}
	e.events.Emit(events.Event{Event: events.WorldResumed, Project: project, Worktree: wt})
	e.log.Info("world resumed", "world", key)
	e.routes.Refresh(ctx)
	return nil
}

// Pause stops (stop) or continues each cmd service's process group of a
// world, then anything else carrying the world's marker. It records
// nothing: Suspend and Resume do.
func (e *Engine) Pause(ctx context.Context, rec *registry.Worktree, stop bool) error {
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return err
	}
	var errs []error
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd {
			continue
		}
		key := e.SupKey(rec.Project, rec.Name, sv.Name)
		if stop {
			errs = append(errs, e.sup.Suspend(key))
		} else {
			errs = append(errs, e.sup.Resume(key))
		}
	}
	supervisor.PauseMarked(supervisor.WorldMarker(e.homeID, rec.Project, rec.Name), stop)
	return errors.Join(errs...)
}

// Live reports whether a world has a process running: suspending a world
// with none frees nothing.
func (e *Engine) Live(project, wt string) bool {
	for _, st := range e.sup.Statuses() {
		if st.Key.Home == e.homeID && st.Key.Project == project && st.Key.Worktree == wt && st.Pid != 0 {
			return true
		}
	}
	return false
}

// ServiceState is the supervisor's live state of a cmd service; false
// when the supervisor does not run it.
func (e *Engine) ServiceState(project, wt, service string) (state.Service, bool) {
	st, ok := e.sup.State(e.SupKey(project, wt, service))
	return st.State, ok
}

// Shutdown stops supervising, for daemon exit: watchers and waiters end,
// the processes keep running for the next daemon to adopt.
func (e *Engine) Shutdown() { e.sup.Shutdown() }
