package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk"
)

// opDown stops a world's processes; files, ports and slices stay.
func (d *Daemon) opDown(ctx context.Context, raw json.RawMessage, s *stream) (any, error) {
	var a api.DownArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	rec, unlock, err := d.lockWorld(ctx, a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := d.stopWorld(ctx, s, rec); err != nil {
		return nil, err
	}
	rec.State = stateDown
	return d.worldStatus(ctx, rec)
}

// stopWorld stops every cmd service of a world, returning once their
// process groups are gone and their ports are free.
func (d *Daemon) stopWorld(ctx context.Context, s *stream, rec *registry.Worktree) error {
	d.emit(events.Event{Event: events.DownStarted, Project: rec.Project, Worktree: rec.Name})
	d.reg.SetWorktreeState(ctx, rec.ID, stateStopping)
	svcs, err := d.reg.Services(ctx, rec.ID)
	if err != nil {
		return err
	}
	var errs []error
	for _, sv := range svcs {
		if sv.Kind != registry.KindCmd {
			continue
		}
		s.progress("stop", sv.Name, "")
		err := d.sup.Stop(ctx, supKey(rec.Project, rec.Name, sv.Name))
		switch {
		case err == nil:
			d.reg.SetServiceState(ctx, rec.ID, sv.Name, string(supervisor.StateStopped), nil, "")
		case errors.Is(err, supervisor.ErrEscaped):
			d.emit(events.Event{Event: events.ServiceEscaped, Project: rec.Project, Worktree: rec.Name, Service: sv.Name, Error: err.Error()})
			s.progress("stop", sv.Name, err.Error())
		default:
			errs = append(errs, fmt.Errorf("stop %s: %w", sv.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.emit(events.Event{Event: events.DownFailed, Project: rec.Project, Worktree: rec.Name, Error: err.Error()})
		return err
	}
	if lo, hi, err := d.ports.Block(ctx, rec.Project, rec.Name); err == nil && lo > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for held := d.ports.Check(ctx, lo, hi); len(held) > 0; held = d.ports.Check(ctx, lo, hi) {
			if time.Now().After(deadline) {
				s.progress("ports", "", fmt.Sprintf("still held after stop: %v", held))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	d.reg.SetWorktreeState(ctx, rec.ID, stateDown)
	d.refreshRoutes(ctx)
	d.emit(events.Event{Event: events.DownDone, Project: rec.Project, Worktree: rec.Name})
	return nil
}

// opRemove destroys a world: processes, slices, ports, logs and the git
// worktree. It refuses a worktree with uncommitted changes unless forced.
func (d *Daemon) opRemove(ctx context.Context, raw json.RawMessage, s *stream) (any, error) {
	var a api.RemoveArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	rec, unlock, err := d.lockWorld(ctx, a.WorldRef)
	if err != nil {
		return nil, err
	}
	defer unlock()

	isMain := rec.Path == rec.Repo
	var repo *worktree.Repo
	if _, statErr := os.Stat(rec.Path); statErr == nil {
		if repo, err = worktree.Open(ctx, rec.Path); err != nil {
			return nil, errorf(api.CodeInvalid, "%v", err)
		}
		if !a.Force && !isMain {
			changes, err := repo.Dirty(ctx, rec.Path)
			if err != nil {
				return nil, err
			}
			if len(changes) > 0 {
				return nil, errorf(api.CodeConflict, "worktree %s has uncommitted changes; commit or stash them, or pass --force to lose them:\n  %s", rec.Path, joinLines(changes, 20))
			}
		}
	}
	out := worldSummary(rec)
	if err := d.stopWorld(ctx, s, rec); err != nil {
		return nil, err
	}
	if err := d.destroySlices(ctx, s, rec); err != nil {
		return nil, err
	}
	if repo != nil && !isMain {
		s.progress("worktree", "", "remove "+rec.Path)
		m := d.repoLock(repo.Root)
		m.Lock()
		err := repo.Remove(ctx, rec.Path, a.Force)
		m.Unlock()
		if err != nil {
			return nil, errorf(api.CodeConflict, "%v", err)
		}
	}
	if lo, hi, err := d.ports.Block(ctx, rec.Project, rec.Name); err == nil && lo > 0 {
		if _, _, err := d.ports.Release(ctx, rec.Project, rec.Name); err != nil {
			return nil, err
		}
		d.emit(events.Event{Event: events.PortsReleased, Project: rec.Project, Worktree: rec.Name, PortLo: lo, PortHi: hi})
	}
	os.RemoveAll(d.logDir(rec.Project, rec.Name))
	if err := d.reg.DeleteWorktree(ctx, rec.ID); err != nil {
		return nil, err
	}
	d.refreshRoutes(ctx)
	d.emit(events.Event{Event: events.WorktreeRemoved, Project: rec.Project, Worktree: rec.Name})
	return out, nil
}

// destroySlices asks each adapter service's adapter to drop the world's
// slice.
func (d *Daemon) destroySlices(ctx context.Context, s *stream, rec *registry.Worktree) error {
	svcs, err := d.reg.Services(ctx, rec.ID)
	if err != nil {
		return err
	}
	hasSlice := false
	for _, sv := range svcs {
		hasSlice = hasSlice || sv.Kind == registry.KindAdapter
	}
	if !hasSlice {
		return nil
	}
	cfg, err := d.worldConfig(rec)
	if err != nil {
		return fmt.Errorf("read the world's config to find its adapters: %w", err)
	}
	envVals, err := resolveEnv(cfg, rec.Path, nil)
	if err != nil {
		return err
	}
	for _, v := range envVals {
		d.redact.Add(v)
	}
	w := &world{cfg: cfg, project: rec.Project, worktree: rec.Name, path: rec.Path, env: envVals, slices: map[string]slice{}}
	coords := w.coords()
	for _, sv := range svcs {
		svc, ok := cfg.Services[sv.Name]
		if sv.Kind != registry.KindAdapter || !ok || !svc.IsAdapter() {
			continue
		}
		name := sliceName(cfg, rec.Name, svc)
		s.progress("destroy", sv.Name, name)
		conn, err := d.openAdapter(ctx, svc)
		if err != nil {
			return err
		}
		_, err = conn.Destroy(ctx, &sdk.DestroyRequest{Target: d.target(w, svc, name, coords)})
		conn.Close()
		if err != nil {
			return errorf(api.CodeFailed, "destroy %s slice %q of %s: %v", svc.Adapter, name, sv.Name, err)
		}
		d.emit(events.Event{Event: events.SliceDestroyed, Project: rec.Project, Worktree: rec.Name, Service: sv.Name, Adapter: svc.Adapter})
	}
	return nil
}

func worldSummary(rec *registry.Worktree) *api.World {
	return &api.World{Project: rec.Project, Worktree: rec.Name, Branch: rec.Branch, Path: rec.Path, State: rec.State}
}

func joinLines(lines []string, n int) string {
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf("\n  … and %d more", len(lines)-n)
		lines = lines[:n]
	}
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out + more
}
