package admission

import (
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
)

// Key names a world in the queue: "project/worktree".
func Key(project, worktree string) string { return project + "/" + worktree }

// SplitKey is the project and worktree of a Key.
func SplitKey(key string) (project, worktree string) {
	project, worktree, _ = strings.Cut(key, "/")
	return project, worktree
}

// AddStatus adds to a status answer what admission knows: the worlds
// waiting in the queue (with their place and reason; with all, those not
// recorded yet too), why a world is suspended, and the machine's pressure
// against the reserves.
func (c *Controller) AddStatus(res *api.StatusResult, all bool) {
	snap := c.Snapshot()
	byKey := map[string]int{}
	for i, w := range res.Worlds {
		byKey[Key(w.Project, w.Worktree)] = i
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
			project, wt := SplitKey(q.Key)
			res.Worlds = append(res.Worlds, api.World{Project: project, Worktree: wt, State: state.WorldQueued, Queue: qi, Services: []api.Service{}})
		}
	}
	for _, h := range snap.Slots {
		if i, ok := byKey[h.Key]; ok && h.Suspended != "" {
			res.Worlds[i].Suspended = h.Suspended
		}
	}
	p := c.pressureOf(snap)
	res.Pressure = &p
}

// Pressure is the machine's pressure against the reserves, and the
// queues (`binky reserve`, status).
func (c *Controller) Pressure() api.Pressure { return c.pressureOf(c.Snapshot()) }

// pressureOf is the pressure of snap, with the jobs queue as it is now.
func (c *Controller) pressureOf(snap Snapshot) api.Pressure {
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
	j := c.Jobs()
	p.Jobs, p.JobsRunning, p.JobsQueued = j.Limit, j.Running, len(j.Queue)
	return p
}
