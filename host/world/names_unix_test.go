//go:build !windows

package world

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/internal/gittest"
	"github.com/binkyhq/binky/sdk/names"
)

// namesWorld has two url services: web under the project's template, api
// with a host of its own.
const namesWorld = `
[project]
name = "nm"
port_range = PORTRANGE
NAMES

[agents]
expose = ["web", "api"]

[services.web]
cmd    = 'exec sleep 100811'
url    = "web"
health = { exec = "true" }

[services.api]
cmd    = 'exec sleep 100812'
url    = "api"
HOST
health = { exec = "true" }
`

func namesConfig(project, host string) string {
	c := strings.Replace(namesWorld, "NAMES", project, 1)
	return strings.Replace(c, "HOST", host, 1)
}

// routeHosts is the proxy's table as the engine makes it: host → world/service.
func routeHosts(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	rs, err := f.e.Routes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rs {
		out[r.Host] = r.Worktree + "/" + r.Service
	}
	return out
}

// TestNamesTemplateApexHost: a hostname template with {service},
// {worktree}, {branch}, {project} and {user} under apex test names web; api's
// host override gives it a flat name; routes, status and env agree; the
// default (no template, no apex) is names.Host's, unchanged.
func TestNamesTemplateApexHost(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`hostname = "{service}-{branch}.{project}.{user}"
apex = "test"`, `host = "{worktree}.{project}"`))
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	user := names.UserLabel(userName())
	web, apiHost := "web-feat.nm."+user+".test", "feat.nm.test"
	got := routeHosts(t, f)
	if got[web] != "feat/web" || got[apiHost] != "feat/api" || len(got) != 2 {
		t.Errorf("routes %v; want %s and %s", got, web, apiHost)
	}
	st, err := f.e.Status(ctx, api.StatusArgs{})
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{}
	for _, s := range st.Worlds[0].Services {
		urls[s.Name] = s.URL
	}
	if urls["web"] != "http://"+web || urls["api"] != "http://"+apiHost {
		t.Errorf("status URLs %v; want http://%s and http://%s", urls, web, apiHost)
	}
	env, err := f.e.Exposed(ctx, f.record())
	if err != nil || env.Env["web"] != "http://"+web || env.Env["api"] != "http://"+apiHost {
		t.Errorf("env %v, %v; want the templated URLs", env.Env, err)
	}

	// Back to no template: the names are the default ones, and the plan
	// records the new URLs.
	f.editConfig(`hostname = "{service}-{branch}.{project}.{user}"
apex = "test"`, "")
	f.editConfig(`host = "{worktree}.{project}"`, "")
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up without a template: %v\n%s", err, f.said)
	}
	got = routeHosts(t, f)
	if _, ok := got[names.Host("web", "feat", "nm")]; !ok || got["web.feat.nm.localhost"] != "feat/web" {
		t.Errorf("default routes %v; want web.feat.nm.localhost", got)
	}
	if env, _ := f.e.Exposed(ctx, f.record()); env.Env["api"] != "http://api.feat.nm.localhost" {
		t.Errorf("default env %v", env.Env)
	}
}

// TestStableNames: two worlds are handed app and app2 in order and keep
// them across down and up; a third, with the set taken, is refused naming
// the holders; once one world is removed the third gets its name. The
// stable name is in status, env and the hostnames.
func TestStableNames(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`stable_names = ["app", "app2"]`, ""))
	base := filepath.Dir(f.wt)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up feat: %v\n%s", err, f.said)
	}
	second := gittest.Worktree(t, f.repo, filepath.Join(base, "two"), "two")
	if _, err := f.up(ctx, api.UpArgs{Dir: second, Env: f.env}); err != nil {
		t.Fatalf("up two: %v\n%s", err, f.said)
	}
	got := routeHosts(t, f)
	if got["web.app.nm.localhost"] != "feat/web" || got["web.app2.nm.localhost"] != "two/web" {
		t.Errorf("routes %v; want feat at app, two at app2", got)
	}
	st, _ := f.e.Status(ctx, api.StatusArgs{})
	held := map[string]string{}
	for _, w := range st.Worlds {
		held[w.Worktree] = w.StableName
	}
	if held["feat"] != "app" || held["two"] != "app2" {
		t.Errorf("status stable names %v; want feat app, two app2", held)
	}
	if env, _ := f.e.Exposed(ctx, f.record()); env.StableName != "app" || api.EnvVars(env)["BINKY_STABLE_NAME"] != "app" {
		t.Errorf("env of feat: %+v; want stable name app", env)
	}

	third := gittest.Worktree(t, f.repo, filepath.Join(base, "three"), "three")
	_, err := f.up(ctx, api.UpArgs{Dir: third, Env: f.env})
	if err == nil || !strings.Contains(err.Error(), "app by world nm/feat") || !strings.Contains(err.Error(), "app2 by world nm/two") {
		t.Fatalf("up of a third world with the set taken: %v; want it refused naming nm/feat and nm/two", err)
	}
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeConflict {
		t.Errorf("error code %v; want conflict", err)
	}

	// down keeps the name; remove frees it.
	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up feat again: %v", err)
	}
	if f.record().StableName != "app" {
		t.Errorf("after down and up feat holds %q; want app kept", f.record().StableName)
	}
	if _, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("remove feat: %v\n%s", err, f.said)
	}
	if _, err := f.up(ctx, api.UpArgs{Dir: third, Env: f.env}); err != nil {
		t.Fatalf("up three after feat's remove: %v\n%s", err, f.said)
	}
	got = routeHosts(t, f)
	if got["web.app.nm.localhost"] != "three/web" || got["web.app2.nm.localhost"] != "two/web" {
		t.Errorf("routes %v; want three at app (freed), two kept at app2", got)
	}
}

// TestNameCollisions: a template that gives two worlds one name refuses
// the second up naming the first world, also across projects of one home;
// two services of one world on one name are refused at up.
func TestNameCollisions(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`hostname = "{service}.shared"
apex = "test"`, ""))
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up feat: %v\n%s", err, f.said)
	}
	base := filepath.Dir(f.wt)
	second := gittest.Worktree(t, f.repo, filepath.Join(base, "two"), "two")
	_, err := f.up(ctx, api.UpArgs{Dir: second, Env: f.env})
	if err == nil || !strings.Contains(err.Error(), "web.shared.test by world nm/feat (service web)") {
		t.Fatalf("up of a second world on the same names: %v; want it refused naming nm/feat", err)
	}
	if got := routeHosts(t, f); got["web.shared.test"] != "feat/web" {
		t.Errorf("after the refusal web.shared.test is %q's; want feat's", got["web.shared.test"])
	}

	// Another project of the same home, on the same name.
	other := gittest.Repo(t, filepath.Join(base, "other"), "ot")
	lo := freePort(t)
	f.write(filepath.Join(other, "binky.toml"), strings.Replace(strings.Replace(namesConfig(`hostname = "{service}.shared"
apex = "test"`, ""), `name = "nm"`, `name = "ot"`, 1), "PORTRANGE", fmt.Sprintf("[%d, %d]", lo, lo+59), 1))
	gittest.Run(t, other, "commit", "-q", "-am", "other")
	_, err = f.up(ctx, api.UpArgs{Dir: other, Env: f.env})
	if err == nil || !strings.Contains(err.Error(), "by world nm/feat") {
		t.Fatalf("up of another project on the same names: %v; want it refused naming nm/feat", err)
	}

	// Two services of one world on one name.
	f.editConfig(`hostname = "{service}.shared"`, `hostname = "{worktree}.x"`)
	_, err = f.up(ctx, f.upArgs())
	if err == nil || !strings.Contains(err.Error(), "would both be served at feat.x.test") {
		t.Errorf("two services on one name: %v; want it refused", err)
	}
}

// TestStableNamesConcurrentUps: two new worlds brought up at once get the
// two names of the set, one each.
func TestStableNamesConcurrentUps(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`stable_names = ["app", "app2"]`, ""))
	two := gittest.Worktree(t, f.repo, filepath.Join(filepath.Dir(f.wt), "two"), "two")
	errs := make(chan error, 2)
	for _, dir := range []string{f.wt, two} {
		go func() {
			_, said, err := f.upAlongside(ctx, api.UpArgs{Dir: dir, Env: f.env})
			if err != nil {
				err = fmt.Errorf("up %s: %w\n%s", dir, err, said)
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.e.Status(ctx, api.StatusArgs{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range st.Worlds {
		got[w.StableName] = true
	}
	if !got["app"] || !got["app2"] || len(st.Worlds) != 2 {
		t.Errorf("stable names of two worlds upped at once: %+v; want app and app2", got)
	}
	if rs := routeHosts(t, f); len(rs) != 4 {
		t.Errorf("routes %v; want two names per world, none shared", rs)
	}
}
