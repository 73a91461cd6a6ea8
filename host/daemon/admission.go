package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/world"
)

// Registry settings keys `binky reserve` writes.
const (
	settingMaxParallel  = "max_parallel"
	settingRAMReserve   = "ram_reserve"
	settingDiskHeadroom = "disk_headroom"
)

// machineLimits caches the registry's admission bounds.
type machineLimits struct {
	mu  sync.Mutex
	lim admission.Limits
	set map[string]bool // which came from the registry
}

func (m *machineLimits) get() admission.Limits {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lim
}

// startAdmission builds the admission controller, holds a place for every
// world that already runs (in the order they were recorded), and samples
// pressure until ctx ends.
func (d *Daemon) startAdmission(ctx context.Context) {
	d.admSrc = admission.System{Dir: d.home}
	// Test hooks (docs/admission.md, "Testing"), from Options.
	if f := d.opts.PressureFile; f != "" {
		d.admSrc = admission.File{Path: f}
		d.log.Warn("admission reads its pressure from a test file", "file", f)
	}
	d.loadLimits(ctx)
	opts := admission.Options{
		Source:  d.admSrc,
		Limits:  d.limits.get,
		Suspend: d.suspendWorld,
		Resume:  d.resumeWorld,
		CPUTime: func(key string) (time.Duration, bool) {
			return supervisor.MarkedCPU(key + "/")
		},
		Live:   d.worldLive,
		Logger: d.log.Named("admission"),
	}
	if iv := d.opts.PressureInterval; iv > 0 {
		opts.Interval, opts.SuspendGap = iv, iv
	}
	d.adm = admission.New(opts)
	d.admOff = d.opts.AdmissionOff
	d.admQueue = &admission.Journal{Path: filepath.Join(d.home, queueFile)}
	d.settleLeftQueued(ctx)
	if recs, err := d.reg.Worktrees(ctx); err == nil {
		for _, rec := range recs {
			switch rec.State {
			case state.WorldUp, state.WorldStarting, state.WorldSuspended:
				key := world.Key(rec.Project, rec.Name)
				d.adm.Hold(key, rec.State == state.WorldSuspended)
				if cfg, err := d.w.Config(rec); err == nil {
					d.adm.SetIdle(key, cfg.Project.IdleSuspend)
				}
			}
		}
	}
	go d.adm.Run(ctx)
}

// queueFile (in BINKY_HOME) records the worlds waiting in the queue.
const queueFile = "admission-queue.json"

// settleLeftQueued marks down, with the reason, each world an earlier
// daemon left waiting in the queue: its caller went with that daemon (a
// caller that comes back queues again). A world recorded up or suspended
// meanwhile is left as it is; one never recorded is recorded down, so
// status shows what became of it. Nothing is left starting.
func (d *Daemon) settleLeftQueued(ctx context.Context) {
	left, err := d.admQueue.Take()
	if err != nil {
		d.log.Warn("read the queue an earlier daemon left", "error", err)
	}
	for _, e := range left {
		var w registry.Worktree
		if err := json.Unmarshal(e.Data, &w); err != nil || w.Project == "" || w.Name == "" {
			d.log.Warn("a recorded queued world is unreadable; skipped", "world", e.Key)
			continue
		}
		reason := fmt.Sprintf("was queued (since %s) when the daemon stopped; its caller went with it: run binky up %s again", e.Since.Local().Format("15:04:05"), w.Name)
		rec, err := d.reg.Worktree(ctx, w.Project, w.Name)
		if err != nil {
			w.State = state.WorldDown
			if rec, err = d.reg.UpsertWorktree(ctx, &w); err != nil {
				d.log.Warn("record a world left queued", "world", e.Key, "error", err)
				continue
			}
		}
		switch rec.State {
		case state.WorldUp, state.WorldSuspended, state.WorldDegraded:
			continue // it holds its place
		}
		if err := d.reg.SetWorktreeStateReason(ctx, rec.ID, state.WorldDown, reason); err != nil {
			d.log.Warn("mark down a world left queued", "world", e.Key, "error", err)
			continue
		}
		d.log.Info("a world left queued by an earlier daemon is down", "world", e.Key)
	}
}

func splitKey(key string) (project, worktree string) {
	project, worktree, _ = strings.Cut(key, "/")
	return project, worktree
}

// loadLimits reads the machine's bounds from the registry over the
// defaults. The default disk headroom is capped at a twentieth of the
// filesystem, so a small BINKY_HOME filesystem is not full by definition.
func (d *Daemon) loadLimits(ctx context.Context) {
	lim := admission.Limits{
		MaxParallel:  admission.DefaultMaxParallel,
		RAMReserve:   admission.DefaultRAMReserve,
		DiskHeadroom: admission.DefaultDiskHeadroom,
	}
	if d.admSrc != nil {
		if s, err := d.admSrc.Sample(ctx); err == nil && s.DiskTotal > 0 {
			lim.DiskHeadroom = min(lim.DiskHeadroom, float64(s.DiskTotal)/20/1e9)
		}
	}
	set := map[string]bool{}
	all, err := d.reg.Settings(ctx)
	if err != nil {
		d.log.Warn("read admission bounds; using the defaults", "error", err)
	}
	if v, ok := all[settingMaxParallel]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			lim.MaxParallel, set[settingMaxParallel] = n, true
		}
	}
	if v, ok := all[settingRAMReserve]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			lim.RAMReserve, set[settingRAMReserve] = f, true
		}
	}
	if v, ok := all[settingDiskHeadroom]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			lim.DiskHeadroom, set[settingDiskHeadroom] = f, true
		}
	}
	d.limits.mu.Lock()
	d.limits.lim, d.limits.set = lim, set
	d.limits.mu.Unlock()
}

// projectLimits are a project's own bounds. The controller applies them
// with the machine's as they are at each decision: the project's
// max_parallel counts its own worlds, the machine's all of them.
func (d *Daemon) projectLimits(cfg *config.Config) admission.Limits {
	return admission.Limits{
		MaxParallel: cfg.Project.MaxParallel, RAMReserve: cfg.Project.RAMReserve, DiskHeadroom: cfg.Project.DiskHeadroom,
	}
}

// admit is step 3 of up: the world waits in the admission queue until it
// may run, showing its place and the reason as progress. A caller that
// hangs up leaves the queue. With noWait it fails at once instead.
func (d *Daemon) admit(ctx context.Context, s world.Progress, cfg *config.Config, w *registry.Worktree, noWait bool) error {
	if d.admOff {
		return nil
	}
	project, wt := w.Project, w.Name
	key := world.Key(project, wt)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.Gone() != nil {
		go func() {
			select {
			case <-s.Gone():
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	queuedAt := time.Time{}
	resumed, err := d.adm.Acquire(wctx, key, d.projectLimits(cfg), noWait, func(q admission.Wait) {
		if queuedAt.IsZero() {
			queuedAt = time.Now()
			d.emit(events.Event{Event: events.WorldQueued, Project: project, Worktree: wt, Detail: q.Reason})
			if d.admQueue != nil {
				if err := d.admQueue.Add(key, w); err != nil {
					d.log.Warn("record a queued world", "world", key, "error", err)
				}
			}
		}
		s.Progress("queued", "", fmt.Sprintf("position %d: %s", q.Position, q.Reason))
	})
	if !queuedAt.IsZero() && d.admQueue != nil {
		d.admQueue.Remove(key)
	}
	var refused *admission.Refused
	switch {
	case errors.As(err, &refused):
		d.emit(events.Event{Event: events.WorldRefused, Project: project, Worktree: wt, Detail: refused.Reason})
		return api.Errorf(api.CodeConflict, "%s cannot start now: %s (run up without --no-wait to queue, or make room: binky down another world, or binky reserve)", wt, refused.Reason)
	case err != nil:
		return api.Wrap(api.CodeFailed, err)
	}
	if !queuedAt.IsZero() {
		d.emit(events.Event{Event: events.WorldAdmitted, Project: project, Worktree: wt, Detail: "waited " + time.Since(queuedAt).Round(time.Millisecond).String()})
		s.Progress("admitted", "", "")
	}
	if resumed {
		s.Progress("resumed", "", "")
	}
	return nil
}

// worldLive reports whether a world has a process running (the
// controller's Live hook): suspending a world with none frees nothing.
func (d *Daemon) worldLive(key string) bool {
	project, wt := splitKey(key)
	return d.w.Live(project, wt)
}

// suspendWorld is the controller's Suspend hook: the engine suspends the
// world, with the reason admission recorded for it.
func (d *Daemon) suspendWorld(key string) error {
	project, wt := splitKey(key)
	why, _ := d.adm.Suspended(key)
	return d.w.Suspend(context.Background(), project, wt, why)
}

// resumeWorld is the controller's Resume hook (and up on a suspended
// world's): the engine continues the world.
func (d *Daemon) resumeWorld(key string) error {
	project, wt := splitKey(key)
	return d.w.Resume(context.Background(), project, wt)
}

// beforeStop continues a suspended world before down or remove stops it: a
// stopped process does not act on SIGTERM until continued.
func (d *Daemon) beforeStop(ctx context.Context, rec *registry.Worktree) {
	if d.adm == nil || rec.State != state.WorldSuspended {
		return
	}
	if err := d.w.Pause(ctx, rec, false); err != nil {
		d.log.Warn("continue a suspended world before stopping it", "world", rec.Name, "error", err)
	}
}

// released gives a world's place back once it no longer runs (down,
// remove, a failed up); the next queued up is admitted.
func (d *Daemon) released(project, wt string) {
	if d.adm != nil && !d.admOff {
		d.adm.Release(world.Key(project, wt))
	}
}

// admissionStatus adds to status what admission knows: worlds waiting in
// the queue (with their place and reason), why a world is suspended, and
// the machine's pressure against the reserves.
func (d *Daemon) admissionStatus(res *api.StatusResult, all bool) {
	if d.adm == nil {
		return
	}
	snap := d.adm.Snapshot()
	byKey := map[string]int{}
	for i, w := range res.Worlds {
		byKey[world.Key(w.Project, w.Worktree)] = i
	}
	for _, q := range snap.Queue {
		qi := &api.Queue{Position: q.Position, Reason: q.Reason, Limit: q.Limit}
		if i, ok := byKey[q.Key]; ok {
			if res.Worlds[i].State != state.WorldSuspended {
				res.Worlds[i].State = state.WorldQueued
			}
			res.Worlds[i].Queue = qi
			continue
		}
		if all {
			project, wt := splitKey(q.Key)
			res.Worlds = append(res.Worlds, api.World{Project: project, Worktree: wt, State: state.WorldQueued, Queue: qi, Services: []api.Service{}})
		}
	}
	for _, h := range snap.Slots {
		if i, ok := byKey[h.Key]; ok && h.Suspended != "" {
			res.Worlds[i].Suspended = h.Suspended
		}
	}
	p := pressureOf(snap)
	d.jobsPressure(&p)
	res.Pressure = &p
}

// jobsPressure adds the jobs queue to p.
func (d *Daemon) jobsPressure(p *api.Pressure) {
	if d.adm == nil {
		return
	}
	j := d.adm.Jobs()
	p.Jobs, p.JobsRunning, p.JobsQueued = j.Limit, j.Running, len(j.Queue)
}

func pressureOf(snap admission.Snapshot) api.Pressure {
	p := api.Pressure{
		RAMFreePct: -1, DiskFreeGB: -1,
		RAMReserve: snap.Limits.RAMReserve, DiskHeadroom: snap.Limits.DiskHeadroom,
		MaxParallel: snap.Limits.MaxParallel, Running: len(snap.Slots), Queued: len(snap.Queue),
	}
	if snap.Sample.MemTotal > 0 {
		p.RAMFreePct = snap.Sample.RAMFreePct()
	}
	if snap.Sample.DiskTotal > 0 {
		p.DiskFreeGB = snap.Sample.DiskFreeGB()
	}
	return p
}
