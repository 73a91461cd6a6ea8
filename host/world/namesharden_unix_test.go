//go:build !windows

package world

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/internal/gittest"
)

// TestNamesHostileInput: {user} of a user name that is no DNS label is
// folded into one; a branch of 300 characters under {branch} gets its
// short hashed label; a template whose filled-in label is too long is
// refused at up, naming the service, the label and the template, before
// anything starts.
func TestNamesHostileInput(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`hostname = "{service}.{user}.{project}"`, `host = "{branch}.{project}"`))
	f.e.user = `CORP\Ann.Lee@Example--Ünïcode_ `
	base := filepath.Dir(f.wt)
	long := "topic/" + strings.Repeat("a", 60) + "/" + strings.Repeat("b", 60) + "/" + strings.Repeat("c", 60) + "/" + strings.Repeat("d", 60) + "/" + strings.Repeat("e", 50)
	wt := gittest.Worktree(t, f.repo, filepath.Join(base, "long"), long)
	if _, err := f.up(ctx, api.UpArgs{Dir: wt, Env: f.env}); err != nil {
		t.Fatalf("up of a 300-character branch: %v\n%s", err, f.said)
	}
	for h, who := range routeHosts(t, f) {
		for _, l := range strings.Split(h, ".") {
			if len(l) == 0 || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
				t.Errorf("route %s (%s): label %q is not a DNS label", h, who, l)
			}
		}
		if strings.HasSuffix(who, "/web") && !strings.HasPrefix(h, "web.corp-ann-lee-example-") {
			t.Errorf("web's name %s; want {user} folded (web.corp-ann-lee-example-…)", h)
		}
	}

	// {branch} beside more in one label: too long, refused naming it.
	path := filepath.Join(wt, "binky.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.write(path, strings.Replace(string(b), `host = "{branch}.{project}"`, `host = "{branch}-{service}-{user}.{project}"`, 1))
	_, err = f.up(ctx, api.UpArgs{Dir: wt, Env: f.env})
	t.Logf("refused: %v", err)
	var ae *api.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != api.CodeInvalid ||
		!strings.Contains(err.Error(), "the hostname of api") || !strings.Contains(err.Error(), `"{branch}-{service}-{user}.{project}"`) || !strings.Contains(err.Error(), "not a DNS label") {
		t.Fatalf("up with a label too long: %v; want invalid, naming api, the label and the template", err)
	}
}

// TestRemoveForceFreesStableName: remove --force of a world whose slice
// cannot be destroyed (its server unreachable) still forgets the world,
// and with it its stable name and hostnames: the next world is handed
// the name and served at it.
func TestRemoveForceFreesStableName(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`stable_names = ["app"]`, "")+`
[services.db]
adapter = "fake"
`)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	if got := f.record().StableName; got != "app" {
		t.Fatalf("feat holds %q; want app", got)
	}
	two := gittest.Worktree(t, f.repo, filepath.Join(filepath.Dir(f.wt), "two"), "two")
	if _, err := f.up(ctx, api.UpArgs{Dir: two, Env: f.env}); err == nil {
		t.Fatal("up of two with the only stable name held: want it refused")
	}
	f.fa.failNext("destroy", -1, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	if _, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref()}); err == nil {
		t.Fatal("remove with an unreachable slice: want it refused without --force")
	}
	if _, err := f.remove(ctx, api.RemoveArgs{WorldRef: f.ref(), Force: true}); err != nil {
		t.Fatalf("remove --force: %v\n%s", err, f.said)
	}
	if !strings.Contains(f.said, "drop it by hand") {
		t.Errorf("remove --force did not say where the slice is left:\n%s", f.said)
	}
	f.fa.failNext("destroy", 0, nil)
	if _, err := f.up(ctx, api.UpArgs{Dir: two, Env: f.env}); err != nil {
		t.Fatalf("up of two after feat's remove --force: %v\n%s", err, f.said)
	}
	got := routeHosts(t, f)
	if got["web.app.nm.localhost"] != "two/web" || len(got) != 2 {
		t.Errorf("routes %v; want two at web.app.nm.localhost (and api), nothing of feat", got)
	}
}

// TestTemplateEditWaitsForUp: a template edited in a running world's
// binky.toml changes nothing the proxy serves until up claims the new
// names: before it, the world keeps the names it holds (even one another
// world holds under the edited template is not taken from it), as status
// says; up then refuses the collision, and an edit without one moves the
// routes.
func TestTemplateEditWaitsForUp(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig("", ""))
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up feat: %v\n%s", err, f.said)
	}
	two := gittest.Worktree(t, f.repo, filepath.Join(filepath.Dir(f.wt), "two"), "two")
	if _, err := f.up(ctx, api.UpArgs{Dir: two, Env: f.env}); err != nil {
		t.Fatalf("up two: %v\n%s", err, f.said)
	}
	want := map[string]string{
		"web.feat.nm.localhost": "feat/web", "api.feat.nm.localhost": "feat/api",
		"web.two.nm.localhost": "two/web", "api.two.nm.localhost": "two/api",
	}
	same := func(what string) {
		t.Helper()
		rs, err := f.e.Routes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rs {
			if prev, dup := got[r.Host]; dup {
				t.Errorf("%s: %s routed to %s and to %s/%s", what, r.Host, prev, r.Worktree, r.Service)
			}
			got[r.Host] = r.Worktree + "/" + r.Service
		}
		if len(got) != len(want) {
			t.Errorf("%s: routes %v; want %v", what, got, want)
		}
		for h, w := range want {
			if got[h] != w {
				t.Errorf("%s: %s routes to %q; want %s", what, h, got[h], w)
			}
		}
	}
	same("after both ups")

	// feat's template now lands on two's names; no up yet.
	f.editConfig(`name = "nm"`, `name = "nm"
hostname = "{service}.two.{project}"`)
	same("after feat's template edit, before its up")
	if _, err := f.up(ctx, f.upArgs()); err == nil || !strings.Contains(err.Error(), "by world nm/two") {
		t.Fatalf("up of feat onto two's names: %v; want it refused naming nm/two", err)
	}
	same("after the refused up")

	// An edit without a collision moves feat's routes at its up.
	f.editConfig(`hostname = "{service}.two.{project}"`, `hostname = "{worktree}-{service}.{project}"`)
	same("after a second edit, before its up")
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up of feat with its new template: %v\n%s", err, f.said)
	}
	delete(want, "web.feat.nm.localhost")
	delete(want, "api.feat.nm.localhost")
	want["feat-web.nm.localhost"], want["feat-api.nm.localhost"] = "feat/web", "feat/api"
	same("after feat's up")
}

// TestRefusedUpKeepsNoStableName: an up whose hostname another world holds
// is refused, and the new world keeps no stable name from it: the name it
// would have had is free for the next world.
func TestRefusedUpKeepsNoStableName(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, namesConfig(`stable_names = ["app", "app2"]`, `host = "shared"`))
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up feat: %v\n%s", err, f.said)
	}
	base := filepath.Dir(f.wt)
	two := gittest.Worktree(t, f.repo, filepath.Join(base, "two"), "two")
	_, err := f.up(ctx, api.UpArgs{Dir: two, Env: f.env})
	if err == nil || !strings.Contains(err.Error(), "by world nm/feat (service api)") {
		t.Fatalf("up of two onto feat's api name: %v; want it refused naming nm/feat", err)
	}
	if rec, err := f.e.reg.Worktree(ctx, "nm", "two"); err == nil && rec.StableName != "" {
		t.Errorf("the refused world two holds the stable name %q; want none", rec.StableName)
	}
	// The next world, with a name of its own for api, gets app2.
	three := gittest.Worktree(t, f.repo, filepath.Join(base, "three"), "three")
	cfgPath := filepath.Join(three, "binky.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	f.write(cfgPath, strings.Replace(string(b), `host = "shared"`, `host = "{worktree}-api"`, 1))
	if _, err := f.up(ctx, api.UpArgs{Dir: three, Env: f.env}); err != nil {
		t.Fatalf("up three: %v\n%s", err, f.said)
	}
	if rec, err := f.e.reg.Worktree(ctx, "nm", "three"); err != nil || rec.StableName != "app2" {
		t.Errorf("three's stable name: %+v, %v; want app2 (two's refused up left it free)", rec, err)
	}
}
