package world

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/golden"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/worktree"
)

// Status describes the worlds a names (the world named or here, else
// every recorded world, in the registry's order), each from its records, the supervisor's live
// state, health and its last verify, and the home they run in. What the
// daemon knows besides (the admission queue, the proxy, degraded mode) it
// adds itself; it also orders the worlds.
func (e *Engine) Status(ctx context.Context, a api.StatusArgs) (*api.StatusResult, error) {
	var recs []*registry.Worktree
	if a.Name != "" || a.Here {
		rec, err := e.findWorld(ctx, a.WorldRef)
		if err != nil {
			return nil, err
		}
		recs = []*registry.Worktree{rec}
	} else {
		var err error
		if recs, err = e.reg.Worktrees(ctx); err != nil {
			return nil, err
		}
	}
	res := &api.StatusResult{Worlds: []api.World{}}
	memo := newStatusMemo()
	marked := e.markedByWorld()
	for _, rec := range recs {
		w, err := e.statusOf(ctx, rec, memo)
		if err != nil {
			return nil, err
		}
		if !a.Table {
			w.Cost = e.costOf(ctx, rec, marked)
		}
		res.Worlds = append(res.Worlds, *w)
	}
	if a.Name == "" && !a.Here {
		ids := map[int64]bool{}
		for _, rec := range recs {
			ids[rec.ID] = true
		}
		e.cost.keepOnly(ids)
	}
	res.Home = &api.Home{ID: e.homeID, Dir: e.home}
	if abs, err := filepath.Abs(e.home); err == nil {
		res.Home.Dir = abs
	}
	if a.Table {
		res.ForTable()
	}
	return res, nil
}

// worldStatus describes one world from the registry and the supervisor's
// live state (what up, down, reset and restart answer). Addresses are
// redacted: status never shows a secret.
func (e *Engine) worldStatus(ctx context.Context, rec *registry.Worktree) (*api.World, error) {
	return e.statusOf(ctx, rec, newStatusMemo())
}

// statusOf is worldStatus reading configs and worktree HEADs through memo,
// which a status of many worlds shares.
func (e *Engine) statusOf(ctx context.Context, rec *registry.Worktree, memo *statusMemo) (*api.World, error) {
	w := Summary(rec)
	if lo, hi, err := e.ports.Block(ctx, rec.Project, rec.Name); err == nil {
		w.Ports = [2]int{lo, hi}
	}
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	adapters := map[string]string{}
	w.Selection = decodeSelection(rec.Selection).String()
	w.StableName = rec.StableName
	var sel selected
	cfg := memo.config(ctx, rec)
	if cfg != nil {
		sel = selectionOf(cfg, rec.Selection)
		for i, n := range cfg.Order {
			order[n] = i
		}
		for _, sv := range svcs {
			if c, ok := cfg.Services[sv.Name]; ok && c.IsAdapter() {
				adapters[sv.Name] = c.Adapter
			}
		}
	}
	sort.SliceStable(svcs, func(i, j int) bool { return order[svcs[i].Name] < order[svcs[j].Name] })
	for _, sv := range svcs {
		out := api.Service{
			Name: sv.Name, Kind: sv.Kind, State: sv.State, Pid: sv.PID, Ports: sv.Ports,
			URL: sv.URL, Adapter: adapters[sv.Name], Restarts: sv.Restarts, Error: e.redact.String(sv.LastError),
		}
		if sv.Address != "" {
			out.Address = e.redact.String(RedactURL(sv.Address))
		}
		if out.Adapter != "" {
			out.Clone = memo.cloneMethod(e.GoldenStore(), rec, sv.Name)
		}
		for _, p := range sv.Ports {
			if out.Port == 0 || p < out.Port {
				out.Port = p
			}
		}
		supReason := ""
		if sv.Kind == registry.KindCmd {
			if st, ok := e.sup.State(e.SupKey(rec.Project, rec.Name, sv.Name)); ok {
				out.State = st.State
				out.Pid = st.Pid
				out.Restarts = st.Restarts
				supReason = e.redact.String(st.Reason)
				if why := movedPort(st, sv.Ports, rec.Name, sv.Name); why != "" {
					out.State, supReason = state.ServiceUnhealthy, why
				}
			} else if rec.State == state.WorldDown || out.State == "" {
				out.State = state.ServiceStopped
				out.Pid = 0
			}
			if out.State.Running() {
				out.Error = "" // an old exit's text says nothing about this run
				out.Warning = exposedWarning(sv.Ports)
			}
			switch out.State {
			case state.ServiceFailed, state.ServiceLost, state.ServiceExited, state.ServiceBackoff:
				// Ended, and not by a stop, or waiting to restart after a
				// crash: the log's last lines say why, the state does not.
				out.LogTail = e.logTail(rec, sv.Name)
			}
		}
		out.Reason = serviceReason(out, supReason)
		if sv.Kind == registry.KindCmd && sv.Stopped && !out.State.Live() {
			out.State, out.Reason, out.LogTail = state.ServiceStopped, StoppedByUser, nil
		}
		if sv.Kind == registry.KindCmd && cfg != nil && out.State == state.ServiceStopped && e.waiting(cfg, rec, sv) {
			wakeStatus(&out)
		}
		if _, inCfg := order[sv.Name]; inCfg && !sel.in(sv.Name) {
			out.LeftOut, out.Reason, out.LogTail = sel.why, "", nil
		}
		w.Services = append(w.Services, out)
	}
	w.Services = append(w.Services, neverRun(cfg, sel, svcs)...)
	w.State, w.Reason = worldState(w)
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	if v, err := e.reg.LastVerifyRun(ctx, rec.ID); err == nil && v != nil {
		w.Verify = VerifyOf(v)
		if head, ok := memo.head(ctx, rec); ok && head != v.Commit {
			w.Verify.Stale = true
		}
	}
	return w, nil
}

// neverRun are the services of cfg the world's selection left out that
// have no record (they never ran in this world), as status lists them,
// in file order after the others.
func neverRun(cfg *config.Config, sel selected, svcs []*registry.Service) []api.Service {
	if cfg == nil || sel.set == nil {
		return nil
	}
	recorded := map[string]bool{}
	for _, sv := range svcs {
		recorded[sv.Name] = true
	}
	var out []api.Service
	for _, name := range sel.skipped(cfg) {
		if recorded[name] {
			continue
		}
		svc := cfg.Services[name]
		row := api.Service{Name: name, Kind: registry.KindCmd, State: state.ServiceStopped, LeftOut: sel.why}
		if svc.IsAdapter() {
			row.Kind, row.Adapter, row.State = registry.KindAdapter, svc.Adapter, ""
		}
		out = append(out, row)
	}
	return out
}

// movedPort is the reason a live service is unhealthy when its process
// was started on a port ($PORT, st.Port) its record no longer lists: its
// probe vouches for the old port, while env and the proxy hand out the
// recorded one. "" when the port is among the recorded ones, or either is
// unknown.
func movedPort(st supervisor.Status, recorded map[string]int, wt, svc string) string {
	if st.Pid == 0 || st.Port == 0 || len(recorded) == 0 || !st.State.Live() {
		return ""
	}
	ports := make([]int, 0, len(recorded))
	for _, p := range recorded {
		if p == st.Port {
			return ""
		}
		ports = append(ports, p)
	}
	sort.Ints(ports)
	return fmt.Sprintf("unhealthy: it runs on port %d, but port %d is recorded: binky restart %s %s", st.Port, ports[0], wt, svc)
}

// statusMemo is what one status request shares between its worlds: each
// distinct binky.toml text parsed once (a project's worlds mostly share
// it; status reads only the service order and adapters, which depend on
// the text alone), and one `git worktree list` per repository for the
// HEAD of every worktree, instead of several git runs per world.
type statusMemo struct {
	configs map[string]*config.Config // by file text; nil: does not parse
	heads   map[string][]worktree.Worktree
	goldens []*golden.Record // read on first use
	listed  bool
}

// cloneMethod is how the world's slice of service was last cloned, from
// the golden templates' records.
func (m *statusMemo) cloneMethod(store *golden.Store, rec *registry.Worktree, service string) string {
	if !m.listed {
		m.goldens, _ = store.List() // unreadable records only cost this column
		m.listed = true
	}
	for _, r := range m.goldens {
		if r.Project == rec.Project && r.Service == service && r.Methods[rec.Name] != "" {
			return r.Methods[rec.Name]
		}
	}
	return ""
}

func newStatusMemo() *statusMemo {
	return &statusMemo{configs: map[string]*config.Config{}, heads: map[string][]worktree.Worktree{}}
}

// config is the config rec was brought up with, as worldConfig finds it,
// or nil when neither file parses without errors.
func (m *statusMemo) config(ctx context.Context, rec *registry.Worktree) *config.Config {
	for _, p := range []string{filepath.Join(rec.Path, "binky.toml"), rec.ConfigPath} {
		if p == "" {
			continue
		}
		data, err := readConfig(p)
		if err != nil {
			continue
		}
		cfg, seen := m.configs[string(data)]
		if !seen {
			if c, diags, err := config.ParseContext(ctx, p, data); err == nil && !diags.HasErrors() {
				cfg = c
			}
			m.configs[string(data)] = cfg
		}
		if cfg != nil {
			return cfg
		}
	}
	return nil
}

// readConfig reads a binky.toml, at most one byte past config.MaxSize
// (ParseContext refuses a longer one).
func readConfig(path string) ([]byte, error) {
	// A FIFO or device named binky.toml is refused, never waited on.
	return config.ReadFile(path)
}

// head is the commit checked out in rec's worktree; false when git cannot
// tell (the worktree or repository is gone).
func (m *statusMemo) head(ctx context.Context, rec *registry.Worktree) (string, bool) {
	key := rec.Repo
	if key == "" {
		key = rec.Path
	}
	wts, ok := m.heads[key]
	if !ok {
		if repo, err := worktree.Open(ctx, key); err == nil {
			wts, _ = repo.List(ctx)
		}
		m.heads[key] = wts
	}
	for _, wt := range wts {
		if SamePath(wt.Path, rec.Path) {
			return wt.Head, true
		}
	}
	return "", false
}

// failedTail is how many log lines status shows of a failed service.
const failedTail = 5

// logTail is the last lines of a service's log, redacted as one text (a
// secret wrapped over lines is masked too), or nil when it has none.
func (e *Engine) logTail(rec *registry.Worktree, svc string) []string {
	lines, err := supervisor.ReadLogs(filepath.Join(e.logDir(rec.Project, rec.Name), svc+".log"), failedTail)
	if err != nil || len(lines) == 0 {
		return nil
	}
	return strings.Split(e.redact.String(strings.Join(lines, "\n")), "\n")
}

// serviceReason is why a service is not as it should be, in one line, for
// status, MCP and the dashboard; "" when it is. supReason is the
// supervisor's (the failing probe and for how long).
func serviceReason(sv api.Service, supReason string) string {
	switch sv.State {
	case state.ServiceUnhealthy:
		if supReason != "" {
			return supReason
		}
		return "unhealthy: its health check fails"
	case state.ServiceFailed, state.ServiceLost, state.ServiceExited, state.ServiceBackoff:
		switch {
		case sv.Error == "":
			return string(sv.State)
		case strings.HasPrefix(sv.Error, string(sv.State)), strings.HasPrefix(sv.Error, "provisioning failed"):
			return sv.Error
		}
		return string(sv.State) + ": " + sv.Error
	}
	return ""
}

// worldState is what status reports for a world: an up world whose service
// gave up is degraded while others still run, failed when none does.
func worldState(w *api.World) (state.World, string) {
	if !w.State.Serving() {
		return w.State, w.Reason
	}
	failed, live := 0, 0
	var why []string
	for _, sv := range w.Services {
		if sv.Kind != registry.KindCmd || sv.LeftOut != "" {
			continue
		}
		switch {
		case sv.State == state.ServiceStopped && (sv.Reason == StoppedByUser || sv.Reason == WaitsForRequest):
			// binky stop stopped it, or it waits for its first request:
			// the world is as the user wants it.
		case sv.State.Ended():
			failed++
			why = append(why, sv.Name+" "+string(sv.State))
		case sv.State == state.ServiceUnhealthy:
			failed++
			live++
			why = append(why, sv.Name+" unhealthy")
		default:
			live++
		}
	}
	reason := w.Reason // recorded: a slice a reset left half made
	if len(why) > 0 {
		if reason != "" {
			reason += "; "
		}
		reason += strings.Join(why, ", ")
	}
	switch {
	case w.State == state.WorldDegraded:
		// Recorded so (a slice a killed reset left half made): it stays
		// degraded, whatever else is down, until up repairs it.
		return state.WorldDegraded, reason
	case failed == 0:
		return state.WorldUp, ""
	case live > 0:
		return state.WorldDegraded, reason
	}
	return state.WorldFailed, reason
}
