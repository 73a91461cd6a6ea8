package world

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// StoppedByUser is the reason status gives a service binky stop stopped.
const StoppedByUser = "stopped by binky stop"

// StopServices stops the named cmd services of a world and records each
// as stopped by the user: up leaves it stopped (the plan keeps it, apply
// does not start it, an up with nothing else to do says so) until binky
// start starts it again. The rest of the world keeps running.
func (e *Engine) StopServices(ctx context.Context, a api.ServicesArgs, s Progress) (*api.World, error) {
	ref, names, err := e.serviceRef(ctx, a.WorldRef, a.Services)
	if err != nil {
		return nil, err
	}
	rec, unlock, err := e.lockWorld(ctx, s, "stop", ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	if err := checkCmdServices(rec, cfg, names, "stop"); err != nil {
		return nil, err
	}
	for _, name := range names {
		// Recorded first: a daemon killed between the two never restarts
		// what the user asked to stop.
		if err := e.reg.SetServiceStopped(ctx, rec.ID, name, true); err != nil {
			return nil, api.Errorf(api.CodeFailed, "record that %s is stopped (nothing was stopped): %w", name, err)
		}
		s.Progress("stop", name, "")
		e.woken.drop(rec.Project, rec.Name, name)
		err := e.sup.Stop(ctx, e.SupKey(rec.Project, rec.Name, name))
		switch {
		case err == nil:
		case errors.Is(err, supervisor.ErrEscaped):
			e.events.Emit(events.Event{Event: events.ServiceEscaped, Project: rec.Project, Worktree: rec.Name, Service: name, Error: err.Error()})
			s.Progress("stop", name, e.redact.String(err.Error()))
		default:
			return nil, api.Errorf(api.CodeFailed, "stop %s: %w", name, err)
		}
		if err := e.reg.SetServiceState(ctx, rec.ID, name, state.ServiceStopped, nil, ""); err != nil {
			return nil, api.Errorf(api.CodeFailed, "record that %s stopped: %w", name, err)
		}
	}
	e.routes.Refresh(ctx)
	return e.worldStatus(ctx, rec)
}

// StartServices starts the named cmd services of a world again (those
// binky stop stopped, or any that does not run), waiting for each to be
// healthy, and forgets that the user stopped them.
func (e *Engine) StartServices(ctx context.Context, a api.ServicesArgs, s Progress) (*api.World, error) {
	ref, names, err := e.serviceRef(ctx, a.WorldRef, a.Services)
	if err != nil {
		return nil, err
	}
	rec, unlock, err := e.lockWorld(ctx, s, "start", ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !rec.State.Serving() {
		return nil, api.Errorf(api.CodeConflict, "%s is %s: binky up %s brings it up (it starts every service binky stop did not stop)", rec.Name, rec.State, rec.Name)
	}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	if err := checkCmdServices(rec, cfg, names, "start"); err != nil {
		return nil, err
	}
	w, _, err := e.recordedWorld(ctx, cfg, rec, a.Env)
	if err != nil {
		return nil, err
	}
	coords := w.coords()
	var order []string
	for _, level := range cfg.StartOrder() {
		for _, name := range level {
			if slices.Contains(names, name) {
				order = append(order, name)
			}
		}
	}
	for _, name := range order {
		if err := e.reg.SetServiceStopped(ctx, rec.ID, name, false); err != nil {
			return nil, api.Errorf(api.CodeFailed, "record that %s is started: %w", name, err)
		}
		if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, name)); ok && st.State.Live() {
			s.Progress("start", name, "already running")
			continue
		}
		if err := e.startService(ctx, s, w, rec, cfg.Services[name], coords); err != nil {
			return nil, err
		}
		if c := cfg.Services[name]; c.Wake && c.IdleSuspend > 0 {
			// As a woken one (and as a restarted daemon arms it): its
			// idle time counts from this start.
			e.woken.arm(e, rec.Project, rec.Name, name, c.IdleSuspend, wakeDeps(cfg, name))
		}
	}
	e.routes.Refresh(ctx)
	return e.worldStatus(ctx, rec)
}

// checkCmdServices refuses an empty list, or a name that is not a cmd
// service of cfg, naming the ones there are.
func checkCmdServices(rec *registry.Worktree, cfg *config.Config, names []string, verb string) error {
	var cmds []string
	for _, n := range cfg.Order {
		if !cfg.Services[n].IsAdapter() {
			cmds = append(cmds, n)
		}
	}
	if len(names) == 0 {
		what := "binky down stops the whole world"
		if verb == "start" {
			what = "binky up starts the whole world"
		}
		return api.Errorf(api.CodeInvalid, "name the services of %s to %s (it has: %s); %s", rec.Name, verb, strings.Join(cmds, ", "), what)
	}
	for _, name := range names {
		if svc, ok := cfg.Services[name]; !ok || svc.IsAdapter() {
			return api.Errorf(api.CodeInvalid, "%s has no cmd service %q (it has: %s)", rec.Name, name, strings.Join(cmds, ", "))
		}
	}
	return nil
}

// serviceRef reads the arguments of a verb that takes a world and
// services, the world optional: a first name that is no world but is a
// service of the world the caller stands in is that service
// (binky stop api, inside the worktree). A world wins over a service of
// the same name; "." names the world here explicitly.
func (e *Engine) serviceRef(ctx context.Context, ref api.WorldRef, services []string) (api.WorldRef, []string, error) {
	if ref.Name == "" {
		return ref, services, nil
	}
	_, err := e.findWorld(ctx, ref)
	var ae *api.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		return ref, services, nil // lockWorld says what is wrong, if anything
	}
	here := ref
	here.Name = ""
	rec, herr := e.findWorld(ctx, here)
	if herr != nil {
		return ref, services, nil
	}
	cfg, cerr := e.worldConfig(rec)
	if cerr != nil {
		return ref, services, nil
	}
	if _, ok := cfg.Services[ref.Name]; !ok {
		return ref, services, fmt.Errorf("%w (nor is it a service of %s, the world you stand in)", err, rec.Name)
	}
	return here, append([]string{ref.Name}, services...), nil
}
