package world

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/sdk"
)

// How often a world's background figures are measured again, at most:
// when a status asks and the last figure is older. Status never waits
// for them: it reports the last figure with its age.
const (
	diskEvery   = time.Minute
	slicesEvery = 30 * time.Second
	// sliceSizeBound bounds the size calls of one world.
	sliceSizeBound = 30 * time.Second
)

// costs keeps, per world, what cost readings need between two statuses:
// the previous CPU reading (for a percentage) and the background
// measures of disk and slices. Its zero value is ready.
type costs struct {
	mu     sync.Mutex
	worlds map[int64]*worldCost
}

type worldCost struct {
	cpu   time.Duration // the previous CPU reading
	cpuAt time.Time     // when it was taken; zero: none
	// procs is the last reading of the world's processes (source,
	// count, memory, CPU and its percentage), reused for procsFresh: an
	// agent asking status in a loop reads /proc once a second, not on
	// every call.
	procs   api.Cost
	procsOf state.World

	disk     *api.DiskCost
	diskBusy bool

	slices     []api.SliceCost
	slicesAt   time.Time
	slicesBusy bool
}

func (c *costs) of(id int64) *worldCost {
	if c.worlds == nil {
		c.worlds = map[int64]*worldCost{}
	}
	wc := c.worlds[id]
	if wc == nil {
		wc = &worldCost{}
		c.worlds[id] = wc
	}
	return wc
}

// keepOnly forgets the readings of worlds not in ids (removed since).
func (c *costs) keepOnly(ids map[int64]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, wc := range c.worlds {
		if !ids[id] && !wc.diskBusy && !wc.slicesBusy {
			delete(c.worlds, id)
		}
	}
}

// sizer is the optional size call of an adapter line (*adapter.Conn has
// it; an engine test's fake may not).
type sizer interface {
	Size(context.Context, *sdk.SizeRequest) (*sdk.SizeResponse, error)
}

// costOf is what the world of rec costs now: its processes read at once
// (from its cgroup when the daemon has cgroups, else the processes
// carrying its marker), its disk and slices as last measured in the
// background, a new measure started when those are stale.
func (e *Engine) costOf(ctx context.Context, rec *registry.Worktree, marked func(project, worktree string) []int) *api.Cost {
	now := time.Now()
	c := &api.Cost{Source: "unavailable", CPUPercent: -1}
	if canTellProcesses {
		c.Source = "processes"
	}
	e.cost.mu.Lock()
	if wc := e.cost.of(rec.ID); !wc.cpuAt.IsZero() && now.Sub(wc.cpuAt) < procsFresh && wc.procsOf == rec.State {
		p := wc.procs
		e.cost.mu.Unlock()
		return e.costRest(ctx, rec, &p, now)
	}
	e.cost.mu.Unlock()
	if rec.State != state.WorldDown {
		var pids []int
		cgOK := false
		var cgCPU time.Duration
		if e.cgroups != nil && e.cgroups.Root() != "" {
			pids = e.cgroups.Procs(rec.Project, rec.Name)
			var mem int64
			mem, cgCPU, cgOK = cgroupUsage(filepath.Join(e.cgroups.Root(), rec.Project, rec.Name))
			if cgOK {
				c.Source, c.Memory = "cgroup", mem
			}
		}
		if !cgOK {
			pids = marked(rec.Project, rec.Name)
		}
		n, rss, cpu := procsUsage(pids)
		c.Processes, c.RSS, c.CPU = n, rss, cpu
		if cgOK {
			c.CPU = cgCPU
		}
	}

	e.cost.mu.Lock()
	wc := e.cost.of(rec.ID)
	if !wc.cpuAt.IsZero() && now.After(wc.cpuAt) && c.CPU >= wc.cpu {
		c.CPUPercent = 100 * float64(c.CPU-wc.cpu) / float64(now.Sub(wc.cpuAt))
	}
	wc.cpu, wc.cpuAt = c.CPU, now
	wc.procs, wc.procsOf = *c, rec.State
	e.cost.mu.Unlock()
	return e.costRest(ctx, rec, c, now)
}

// procsFresh is how long a reading of a world's processes answers status.
const procsFresh = time.Second

// costRest adds to c, the world's processes, its disk and slices as last
// measured in the background, and starts a new measure when those are
// stale.
func (e *Engine) costRest(ctx context.Context, rec *registry.Worktree, c *api.Cost, now time.Time) *api.Cost {
	e.cost.mu.Lock()
	defer e.cost.mu.Unlock()
	wc := e.cost.of(rec.ID)

	if wc.disk != nil {
		d := *wc.disk
		d.AgeSeconds = now.Sub(d.At).Seconds()
		c.Disk = &d
	}
	if !wc.diskBusy && (wc.disk == nil || now.Sub(wc.disk.At) >= diskEvery) && rec.Path != "" {
		wc.diskBusy = true
		go e.measureDiskOf(context.WithoutCancel(ctx), rec.ID, rec.Path)
	}
	c.Slices = append([]api.SliceCost(nil), wc.slices...)
	for _, s := range c.Slices {
		c.SliceBytes += s.Bytes - s.Shared
	}
	if !wc.slicesBusy && (wc.slicesAt.IsZero() || now.Sub(wc.slicesAt) >= slicesEvery) {
		wc.slicesBusy = true
		r := *rec
		go e.measureSlicesOf(context.WithoutCancel(ctx), &r)
	}
	return c
}

// markedByWorld returns the processes each world of this home runs, by
// their marker, from one look at every process, taken on first use (a
// status of many worlds looks once, not once per world).
func (e *Engine) markedByWorld() func(project, worktree string) []int {
	var once sync.Once
	var all map[int]string
	return func(project, worktree string) []int {
		once.Do(func() {
			home := ""
			if e.homeID != "" {
				home = e.homeID + "/"
			}
			all = supervisor.MarkerValues(home)
		})
		prefix := supervisor.WorldMarker(e.homeID, project, worktree)
		var pids []int
		for pid, m := range all {
			if strings.HasPrefix(m, prefix) {
				pids = append(pids, pid)
			}
		}
		slices.Sort(pids)
		return pids
	}
}

// measureDiskOf measures a worktree's untracked and ignored files and
// keeps the figure; a failed measure keeps the last good figures with the
// error.
func (e *Engine) measureDiskOf(ctx context.Context, id int64, dir string) {
	d := measureDisk(ctx, dir)
	d.At = time.Now()
	d.Error = e.redact.String(d.Error)
	e.cost.mu.Lock()
	defer e.cost.mu.Unlock()
	wc := e.cost.of(id)
	wc.diskBusy = false
	if d.Error != "" && wc.disk != nil {
		old := *wc.disk
		old.Error = d.Error
		wc.disk = &old
		return
	}
	wc.disk = &d
}

// measureSlicesOf asks each of the world's slices' adapters for its size.
func (e *Engine) measureSlicesOf(ctx context.Context, rec *registry.Worktree) {
	ctx, cancel := context.WithTimeout(ctx, sliceSizeBound)
	defer cancel()
	out := e.sliceSizes(ctx, rec)
	e.cost.mu.Lock()
	defer e.cost.mu.Unlock()
	wc := e.cost.of(rec.ID)
	wc.slicesBusy = false
	wc.slices, wc.slicesAt = out, time.Now()
}

// sliceSizes reaches every slice the world records as remove would (its
// adapter, its target) and asks its size. An adapter without the size
// call is marked unsupported.
func (e *Engine) sliceSizes(ctx context.Context, rec *registry.Worktree) []api.SliceCost {
	plan, err := e.planDestroy(ctx, rec, nil, true)
	if err != nil {
		return []api.SliceCost{{Error: e.redact.String(err.Error()), At: time.Now()}}
	}
	defer plan.close()
	var out []api.SliceCost
	for _, it := range plan.items {
		sc := api.SliceCost{Service: it.service, Adapter: it.adapter}
		switch sz, ok := it.conn.(sizer); {
		case it.conn == nil:
			sc.Error = e.redact.String(it.openErr.Error())
		case !ok:
			sc.Unsupported = true
		default:
			resp, err := sz.Size(ctx, &sdk.SizeRequest{Target: it.target})
			switch {
			case err == nil:
				sc.Bytes, sc.Shared, sc.Approximate, sc.Note = resp.Bytes, min(resp.Shared, resp.Bytes), resp.Approximate, resp.Note
			case unsupportedCall(err):
				sc.Unsupported = true
			default:
				sc.Error = e.redact.String(err.Error())
			}
		}
		sc.At = time.Now()
		out = append(out, sc)
	}
	return out
}

// unsupportedCall: the adapter has no size call, by its answer (code
// unsupported) or because it predates the call (invalid, unknown call).
func unsupportedCall(err error) bool {
	switch sdk.CodeOf(err) {
	case sdk.CodeUnsupported:
		return true
	case sdk.CodeInvalid:
		return strings.Contains(err.Error(), "unknown call")
	}
	return false
}
