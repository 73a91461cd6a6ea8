package world

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/golden"
	"github.com/binkyhq/binky/sdk"
)

// Golden lists golden templates, or drops them. Rebuild is a drop: the
// next up (or reset) of a world whose key the template had builds it again
// from that worktree's inputs, which is the only place its migrate and
// seed can run.
func (e *Engine) Golden(ctx context.Context, a api.GoldenArgs, s Progress) (*api.GoldenResult, error) {
	store := e.GoldenStore()
	recs, err := store.List()
	if err != nil {
		e.log.Warn("list templates", "error", err)
		s.Progress("golden", "", "some template records could not be read: "+err.Error())
	}
	out := &api.GoldenResult{Templates: []api.GoldenTemplate{}}
	switch a.Action {
	case api.GoldenList, "":
		live := e.liveWorlds(ctx)
		for _, r := range recs {
			if a.Project == "" || r.Project == a.Project {
				info := e.templateInfo(r, live)
				info.Worlds = slices.DeleteFunc(info.Worlds, func(w string) bool { return !r.Current(w, recs) })
				out.Templates = append(out.Templates, info)
			}
		}
		return out, nil
	case api.GoldenDrop, api.GoldenRebuild:
		sel, err := golden.Select(recs, a.Template, a.Project)
		if err != nil {
			return nil, api.Wrap(api.CodeNotFound, err)
		}
		// Every selected template is tried, past failures; each one's
		// result is reported, and the call fails when any drop did.
		live := e.liveWorlds(ctx)
		var failed []string
		for _, r := range sel {
			info := e.templateInfo(r, live)
			if err := e.dropTemplate(ctx, s, &a, r); err != nil {
				info.Error = err.Error()
				failed = append(failed, r.Slice)
				s.Progress(a.Action, r.Service, r.Slice+": "+err.Error())
			}
			out.Templates = append(out.Templates, info)
		}
		if len(failed) > 0 {
			b, _ := json.Marshal(out)
			return nil, &api.Error{Code: api.CodeFailed, Message: fmt.Sprintf("%s: %d of %d templates could not be dropped: %s (the others were)", a.Action, len(failed), len(sel), strings.Join(failed, ", ")), Detail: b}
		}
		return out, nil
	}
	return nil, api.Errorf(api.CodeInvalid, "unknown golden action %q: use list, rebuild or drop", a.Action)
}

// liveWorlds is the set of recorded worlds, as project → worktree names.
func (e *Engine) liveWorlds(ctx context.Context) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	wts, err := e.reg.Worktrees(ctx)
	if err != nil {
		e.log.Warn("list worlds", "error", err)
		return out
	}
	for _, w := range wts {
		if out[w.Project] == nil {
			out[w.Project] = map[string]bool{}
		}
		out[w.Project][w.Name] = true
	}
	return out
}

// templateInfo is what the CLI shows of a template: the worlds cloned from
// it that still exist, and its size where the adapter keeps files here.
func (e *Engine) templateInfo(r *golden.Record, live map[string]map[string]bool) api.GoldenTemplate {
	t := api.GoldenTemplate{
		Project: r.Project, Service: r.Service, CloneFrom: r.CloneFrom, Adapter: r.Adapter, Server: r.Server,
		Name: r.Slice, Key: golden.Short(r.Key), Created: r.Created, LastUsed: r.LastUsed, Legacy: r.Legacy,
		Size: golden.Size(e.goldenDataDir(r.Adapter), r.Slice), State: r.State,
		Method: r.Method, CopyOnWrite: golden.Sharing(r.Method),
	}
	if t.Size < 0 && r.Bytes > 0 {
		t.Size = r.Bytes // a server's template: as its adapter last said
	}
	for _, w := range r.Worlds {
		if live[r.Project][w] {
			t.Worlds = append(t.Worlds, w)
		}
	}
	return t
}

// dropTemplate destroys one template through its adapter and forgets it.
func (e *Engine) dropTemplate(ctx context.Context, s Progress, a *api.GoldenArgs, r *golden.Record) error {
	m := e.goldenLock(s, r.Service, r.Slice)
	defer m.Unlock()
	s.Progress(a.Action, r.Service, r.Slice)
	t, svc, found := e.templateTarget(ctx, a, r)
	var timeout time.Duration
	if svc != nil {
		timeout = svc.Timeout
	}
	conn, err := e.adapter.Open(ctx, r.Adapter, timeout)
	if err != nil {
		return api.Errorf(api.CodeInvalid, "drop template %q: %w", r.Slice, err)
	}
	_, err = conn.Destroy(ctx, &sdk.DestroyRequest{Target: t})
	conn.Close()
	if err != nil {
		hint := ""
		if !found {
			hint = fmt.Sprintf(" (no binky.toml of project %s was found to reach its server: run binky golden %s inside one of its worktrees)", r.Project, a.Action)
		}
		return api.Errorf(api.CodeFailed, "drop %s template %q: %w%s", r.Adapter, r.Slice, err, hint)
	}
	if err := e.GoldenStore().Delete(r); err != nil {
		return err
	}
	e.log.Info("template dropped", "template", r.Slice, "project", r.Project, "action", a.Action)
	return nil
}

// templateTarget builds the adapter target of a template from the config
// of its service: found in the caller's directory, the worktree that built
// the template, or any world of the project, whichever first reaches the
// server the template lives on. Without one, the target has no admin URL,
// which is enough for adapters that keep files under data/.
func (e *Engine) templateTarget(ctx context.Context, a *api.GoldenArgs, r *golden.Record) (sdk.Target, *config.Service, bool) {
	dirs := []string{a.Dir, r.Path}
	if wts, err := e.reg.Worktrees(ctx); err == nil {
		for _, w := range wts {
			if w.Project == r.Project {
				dirs = append(dirs, w.Path)
			}
		}
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		p, err := config.Find(dir)
		if err != nil {
			continue
		}
		cfg, err := LoadConfig(p)
		if err != nil || cfg.Project.Name != r.Project {
			continue
		}
		svc := templateService(cfg, r)
		if svc == nil {
			continue
		}
		root := filepath.Dir(p)
		env, err := resolveEnv(cfg, root, a.Env)
		if err != nil {
			continue
		}
		e.addSecrets(cfg, env)
		w := &world{cfg: cfg, project: r.Project, path: root, env: env, slices: map[string]slice{}}
		t := e.target(w, svc, r.Slice, w.coords())
		if r.Server != "" && golden.Server(t.AdminURL) != r.Server {
			continue
		}
		return t, svc, true
	}
	return sdk.Target{Slice: r.Slice, Project: r.Project, DataDir: e.goldenDataDir(r.Adapter), Owner: e.homeID, OwnerLabel: e.ownerLabel()}, nil, false
}

// templateService is the adapter service of cfg that r was built for.
func templateService(cfg *config.Config, r *golden.Record) *config.Service {
	if svc := cfg.Services[r.Service]; svc != nil && svc.IsAdapter() && svc.Adapter == r.Adapter {
		return svc
	}
	for _, name := range cfg.Order {
		svc := cfg.Services[name]
		if svc.IsAdapter() && svc.Adapter == r.Adapter && svc.CloneFrom == r.CloneFrom {
			return svc
		}
	}
	return nil
}
