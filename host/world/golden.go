package world

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/golden"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/sdk"
)

// The daemon's side of golden templates: host/golden decides keys, names
// and what to evict; here they meet the adapters. Every change to one
// template (build, clone, record update, drop) happens under that
// template's lock in d.goldens, keyed by its slice name: exactly one daemon
// serves a BINKY_HOME, so this is the build-once lock.

func (e *Engine) GoldenStore() *golden.Store { return golden.NewStore(e.home) }

// goldenLock takes the lock of the template named tmpl, saying so when
// another up holds it.
func (e *Engine) goldenLock(s Progress, svc, tmpl string) *sync.Mutex {
	m := e.goldens.Get(tmpl)
	if !m.TryLock() {
		if s != nil {
			s.Progress("golden", svc, "waiting: another operation is using template "+tmpl)
		}
		m.Lock()
	}
	return m
}

// goldenKey is the key of the template the clone_from service svc of w
// clones from, and that template's name, as binky.toml and the worktree's
// inputs are now: migrate, seed, adapter, server, the content of its
// inputs, its env and its adapter config, rendered with coords
// (w.coords(), holding the slices of the services before svc) as
// golden.TemplateCoords keeps them. Nothing is built, cloned or asked of
// an adapter; only the inputs are read. A plan compares it with the key
// of the template a world's slice was cloned from.
func goldenKey(w *world, svc *config.Service, coords map[string]string) (golden.Key, string, error) {
	key, err := golden.KeyOf(golden.Spec{
		Migrate: svc.Migrate, Seed: svc.Seed, Adapter: svc.Adapter, Inputs: svc.Inputs,
		AdminURL:  w.render(svc.AdminURL, svc.Name, coords),
		EnvSum:    golden.EnvSum(golden.TemplateEnv(svc.Env, svc.Name, coords)),
		ConfigSum: golden.ConfigSum(golden.TemplateConfig(svc.Config, svc.Name, coords)),
	}, w.path)
	if err != nil {
		return golden.Key{}, "", api.Errorf(api.CodeInvalid, "key the golden template of %s in %s: %w", svc.Name, w.path, err)
	}
	return key, golden.Name(w.project, svc.CloneFrom, key.Sum), nil
}

// sliceFromGolden clones the world's slice from the template that matches
// its key (goldenKey), building that template first when it is missing. A
// failed or unsupported clone falls back to provision+migrate+seed,
// logging clone_fallback with the cause; an adapter that says it cannot
// clone goes straight there.
func (e *Engine) sliceFromGolden(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, conn AdapterConn, name string) (slice, error) {
	if !conn.Info().Clone {
		s.Progress("golden", svc.Name, svc.Adapter+" cannot clone; building the slice directly")
		return e.buildSlice(ctx, s, w, rec, svc, conn, name)
	}
	coords := w.coords()
	key, tmpl, err := goldenKey(w, svc, coords)
	if err != nil {
		return slice{}, err
	}
	gt := e.target(w, svc, tmpl, coords)
	t := e.target(w, svc, name, coords)
	store := e.GoldenStore()

	m := e.goldenLock(s, svc.Name, tmpl)
	built, err := e.ensureGolden(ctx, s, w, rec, svc, conn, store, gt, key)
	if err != nil {
		m.Unlock()
		return slice{}, err
	}
	s.Progress("clone", svc.Name, tmpl+" → "+name)
	start := time.Now()
	res, err := conn.Clone(ctx, &sdk.CloneRequest{Target: t, Source: tmpl})
	if err == nil {
		if r, gerr := store.Get(svc.Adapter, tmpl); gerr == nil {
			r.Cloned(rec.Name, res.Method, time.Now())
			if res.SourceBytes > 0 {
				r.Bytes = res.SourceBytes
			}
			if perr := store.Put(r); perr != nil {
				e.log.Warn("record template use", "template", tmpl, "error", perr)
			}
		}
	} else if sdk.CodeOf(err) != sdk.CodeUnsupported {
		// The template could not be cloned (it may have vanished behind
		// binky's back, or be damaged): drop it and forget it, so the next
		// up builds it again; a template that will not drop stays listed.
		if r, gerr := store.Get(svc.Adapter, tmpl); gerr == nil {
			e.discardTemplate(ctx, conn, store, r, gt)
		}
	}
	m.Unlock()
	if err != nil {
		cause := err.Error()
		if sdk.CodeOf(err) == sdk.CodeUnsupported {
			cause = "adapter does not support clone: " + cause
		}
		e.events.Emit(events.Event{Event: events.CloneFallback, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, Error: cause})
		s.Progress("clone", svc.Name, "clone failed; building the slice the slow way (clone_fallback)")
		// A half-made clone must not be mistaken for a provisioned slice.
		conn.Destroy(ctx, &sdk.DestroyRequest{Target: t})
		return e.buildSlice(ctx, s, w, rec, svc, conn, name)
	}
	e.events.Emit(events.Event{Event: events.SliceCloned, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, Method: res.Method, DurationMS: time.Since(start).Milliseconds()})
	if built {
		e.evictGoldens(ctx, s, w, svc, conn, golden.Group{Project: w.project, CloneFrom: svc.CloneFrom, Adapter: svc.Adapter, Server: golden.Server(gt.AdminURL)}, tmpl)
	}
	return e.resolveSlice(ctx, conn, svc, t)
}

// ensureGolden builds the template gt when no record says it was built for
// key. It reports whether it built one. The caller holds its lock.
func (e *Engine) ensureGolden(ctx context.Context, s Progress, w *world, rec *registry.Worktree, svc *config.Service, conn AdapterConn, store *golden.Store, gt sdk.Target, key golden.Key) (bool, error) {
	r, err := store.Get(svc.Adapter, gt.Slice)
	if err == nil && r.Key == key.Sum && r.Ready() {
		return false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.log.Warn("unreadable template record; rebuilding the template", "template", gt.Slice, "error", err)
	}
	start := time.Now()
	why := ""
	if err == nil && r.State == golden.StateBuilding {
		why = "; an earlier build of it did not finish"
	}
	s.Progress("golden", svc.Name, fmt.Sprintf("building template %s (key %s)%s", gt.Slice, key.Short(), why))
	// The intent first: a build cut short anywhere from here on leaves a
	// record that golden list shows and golden drop (or the next build)
	// reaches, never a template on the server binky does not know.
	now := time.Now()
	nr := &golden.Record{
		Project: w.project, Service: svc.Name, CloneFrom: svc.CloneFrom, Adapter: svc.Adapter,
		Server: golden.Server(gt.AdminURL), EnvSum: key.EnvSum, ConfigSum: key.ConfigSum, Slice: gt.Slice, Key: key.Sum, Created: now, LastUsed: now, Path: rec.Path,
		State: golden.StateBuilding,
	}
	if err := store.Put(nr); err != nil {
		return false, fmt.Errorf("record template %q before building it (nothing was built): %w", gt.Slice, err)
	}
	// Whatever holds the name now (a half-built template of a failed
	// build) is not this key's template.
	if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: gt}); err != nil {
		return false, api.Errorf(api.CodeFailed, "drop stale template %q for %s: %w", gt.Slice, svc.Name, err)
	}
	fail := func(err error) (bool, error) {
		e.discardTemplate(ctx, conn, store, nr, gt)
		return false, err
	}
	if _, err := conn.Provision(ctx, &sdk.ProvisionRequest{Target: gt}); err != nil {
		return fail(api.Errorf(api.CodeFailed, "provision template %q for %s: %w", gt.Slice, svc.Name, err))
	}
	sl, err := e.resolveSlice(ctx, conn, svc, gt)
	if err != nil {
		return fail(err)
	}
	if err := e.migrateAndSeed(ctx, s, w, rec, svc, sl); err != nil {
		return fail(fmt.Errorf("build template %q: %w", gt.Slice, err))
	}
	nr.State = ""
	nr.LastUsed = time.Now()
	if err := store.Put(nr); err != nil {
		return false, fmt.Errorf("record template %q: %w", gt.Slice, err)
	}
	e.events.Emit(events.Event{Event: events.GoldenBuilt, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, DurationMS: time.Since(start).Milliseconds()})
	s.Progress("golden", svc.Name, fmt.Sprintf("template %s built in %.1fs", gt.Slice, time.Since(start).Seconds()))
	return true, nil
}

// discardTemplate drops a template whose build or clone failed and forgets
// it; when the drop fails too, its record stays, marked broken, so golden
// list shows it and golden drop retries. The caller holds its lock.
func (e *Engine) discardTemplate(ctx context.Context, conn AdapterConn, store *golden.Store, r *golden.Record, gt sdk.Target) {
	ctx = context.WithoutCancel(ctx)
	if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: gt}); err != nil {
		e.log.Warn("drop a template that failed; it stays listed as broken", "template", r.Slice, "error", err)
		r.State = golden.StateBroken
		if perr := store.Put(r); perr != nil {
			e.log.Warn("record a broken template", "template", r.Slice, "error", perr)
		}
		return
	}
	if err := store.Delete(r); err != nil {
		e.log.Warn("forget a dropped template", "template", r.Slice, "error", err)
	}
}

// evictGoldens drops the templates of g beyond the project's golden_keep,
// least recently used first, keeping keepSlice. A template that cannot be
// dropped is logged and stays listed; the world being brought up does not
// depend on it.
func (e *Engine) evictGoldens(ctx context.Context, s Progress, w *world, svc *config.Service, conn AdapterConn, g golden.Group, keepSlice string) {
	store := e.GoldenStore()
	recs, err := store.List()
	if err != nil {
		e.log.Warn("list templates", "error", err)
	}
	coords := w.coords()
	for _, r := range golden.Evict(recs, g, w.cfg.Project.Keep(), keepSlice) {
		m := e.goldenLock(s, svc.Name, r.Slice)
		s.Progress("golden", svc.Name, fmt.Sprintf("dropping template %s (least recently used beyond golden_keep = %d)", r.Slice, w.cfg.Project.Keep()))
		_, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: e.target(w, svc, r.Slice, coords)})
		if err == nil {
			err = store.Delete(r)
		}
		m.Unlock()
		if err != nil {
			e.log.Warn("drop template", "template", r.Slice, "error", err)
			s.Progress("golden", svc.Name, fmt.Sprintf("could not drop template %s: %v (binky golden drop %s retries)", r.Slice, err, r.Slice))
		}
	}
}

// goldenDataDir is where file adapters keep the slices of adapter.
func (e *Engine) goldenDataDir(adapterName string) string {
	return e.dataDir(adapterName)
}
