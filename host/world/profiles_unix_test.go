//go:build !windows

package world

import (
	"context"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/gittest"
)

// profileWorld: a frontend (web) on nothing, an api on a slice, a worker
// on the api, and a tool that reads the slice's address without
// depending on it.
const profileWorld = `
[project]
name = "pf"
port_range = PORTRANGE

[agents]
expose = ["web", "api"]

[services.db]
adapter = "fake"

[services.api]
cmd        = 'exec sleep 100731'
url        = "api"
depends_on = ["db"]
health     = { exec = "true" }

[services.web]
cmd    = 'exec sleep 100732'
url    = "web"
health = { exec = "true" }

[services.worker]
cmd        = 'exec sleep 100733'
depends_on = ["api"]

[services.tool]
cmd = 'exec sleep 100734'
env = { DB = "${db.url}" }

[profiles.frontend]
services = ["web"]

[profiles.jobs]
services = ["worker"]
`

// TestUpProfiles: up with a profile runs its services and nothing else,
// the plan names what it leaves out; the choice is recorded and kept by a
// plain up; another profile converges (starts and stops the difference,
// dependencies pulled in, the record of a service left out kept); --all
// goes back to everything; status and env say what is left out.
func TestUpProfiles(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, profileWorld)
	up := func(a api.UpArgs) *api.World {
		t.Helper()
		a.Dir, a.Env = f.wt, f.env
		w, err := f.up(ctx, a)
		if err != nil {
			t.Fatalf("up %+v: %v\n%s", a, err, f.said)
		}
		return w
	}
	running := func(want ...string) map[string]int {
		t.Helper()
		pids := f.pids()
		live := map[string]int{}
		for name, pid := range pids {
			if pid > 0 && alive(pid) {
				live[name] = pid
			}
		}
		for _, n := range want {
			if live[n] == 0 {
				t.Errorf("%s does not run; want it running (running: %v)", n, live)
			}
		}
		if len(live) != len(want) {
			t.Errorf("running %v; want exactly %v", keysOf(live), want)
		}
		return live
	}

	// 1. A new world with a profile: web alone, no slice made.
	f.fa.takeCalls()
	up(api.UpArgs{Profile: "frontend"})
	running("web")
	if calls := f.fa.takeCalls(); len(calls) != 0 {
		t.Errorf("up --profile frontend asked the adapter %v; want nothing (db is left out)", calls)
	}
	if rec := f.record(); rec.Selection != `{"profile":"frontend"}` {
		t.Errorf("recorded selection %q; want the frontend profile", rec.Selection)
	}
	st, err := f.e.Status(ctx, api.StatusArgs{WorldRef: f.ref(), Here: true})
	if err != nil {
		t.Fatal(err)
	}
	w := st.Worlds[0]
	if w.Selection != "profile frontend" || w.State != state.WorldUp {
		t.Errorf("status: selection %q, state %s; want profile frontend, up", w.Selection, w.State)
	}
	left := map[string]string{}
	for _, sv := range w.Services {
		left[sv.Name] = sv.LeftOut
	}
	for _, n := range []string{"db", "api", "worker", "tool"} {
		if left[n] != "not in profile frontend" {
			t.Errorf("status marks %s left out as %q; want not in profile frontend", n, left[n])
		}
	}
	if _, ok := left["web"]; !ok || left["web"] != "" {
		t.Errorf("status of web: listed %v, left out %q; want it listed and in", ok, left["web"])
	}
	env, err := f.e.Exposed(ctx, f.record())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := env.Env["api"]; ok || env.NotRunning["api"] != "not in profile frontend" || env.Env["web"] == "" {
		t.Errorf("env = %v, not running %v; want web's URL, api named as not in profile frontend", env.Env, env.NotRunning)
	}

	// 2. A plain up keeps the profile: nothing to do.
	if again := up(api.UpArgs{}); !again.Noop {
		t.Errorf("a plain up after --profile frontend: plan\n%s\nwant nothing to do", strings.Join(again.Plan.Lines(), "\n"))
	}

	// 3. Another profile converges: the worker, with the api and the slice
	// it needs; web stops but keeps its record and ports.
	webPorts := f.ports()["web"]
	dry := up(api.UpArgs{Profile: "jobs", DryRun: true})
	lines := strings.Join(dry.Plan.Lines(), "\n")
	for _, want := range []string{"stop      web: not in profile jobs", "provision db:", "start     api:", "start     worker:", "skip      web: not in profile jobs", "skip      tool: not in profile jobs"} {
		if !strings.Contains(lines, want) {
			t.Errorf("up --profile jobs --dry-run does not say %q:\n%s", want, lines)
		}
	}
	before := running("web")
	up(api.UpArgs{Profile: "jobs"})
	running("api", "worker")
	f.wantDead(before["web"])
	if p := f.ports()["web"]; len(p) == 0 || p["http"] != webPorts["http"] {
		t.Errorf("web's ports after it left the selection: %v; want its record kept with %v", p, webPorts)
	}

	// 3b. restart of all, and a wake after down, start the selection
	// alone: web's record (and spec) is still there.
	if _, err := f.restart(ctx, api.RestartArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("restart: %v\n%s", err, f.said)
	}
	running("api", "worker")
	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("down: %v", err)
	}
	cfg, err := f.e.worldConfig(f.record())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.WakeStart(ctx, cfg, f.record()); err != nil {
		t.Fatalf("wake: %v", err)
	}
	live := running("api", "worker")

	// 4. --only web: api and worker stop; the slice is kept, not destroyed.
	f.fa.takeCalls()
	up(api.UpArgs{Only: []string{"web"}})
	running("web")
	f.wantDead(live["api"], live["worker"])
	for _, c := range f.fa.takeCalls() {
		if c.Verb == "destroy" {
			t.Errorf("switching to --only web destroyed the slice: %v", c)
		}
	}

	// 5. --except tool: everything else, the slice verified as kept.
	up(api.UpArgs{Except: []string{"tool"}})
	running("api", "web", "worker")

	// 6. --all: everything, and the record is cleared.
	up(api.UpArgs{All: true})
	running("api", "web", "worker", "tool")
	if rec := f.record(); rec.Selection != "" {
		t.Errorf("selection after --all: %q; want none", rec.Selection)
	}
}

// TestUpSelectionErrors: a selection that names nothing there, two flags
// at once, and an --except of what another service needs are refused
// before anything is recorded; a recorded profile that left binky.toml
// fails the next plain up, saying how to choose again.
func TestUpSelectionErrors(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, profileWorld)
	for _, tt := range []struct {
		args api.UpArgs
		want string
	}{
		{api.UpArgs{Profile: "backend"}, `has no profile "backend" (its profiles are frontend, jobs)`},
		{api.UpArgs{Only: []string{"web,wbe"}}, `--only web,wbe names "wbe", which is not a service`},
		{api.UpArgs{Profile: "frontend", Only: []string{"web"}}, "up takes one of --profile, --only, --except and --all, not --profile and --only"},
		{api.UpArgs{Except: []string{"api"}, All: true}, "not --except and --all"},
		{api.UpArgs{Except: []string{"db"}}, "--except db: api needs it, so it would run anyway"},
	} {
		a := tt.args
		a.Dir, a.Env = f.wt, f.env
		_, err := f.up(ctx, a)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("up %+v: %v; want an error saying %q", tt.args, err, tt.want)
		}
		if f.record() != nil {
			t.Fatalf("up %+v recorded the world; want it refused first", tt.args)
		}
	}
	a := f.upArgs()
	a.Profile = "jobs"
	if _, err := f.up(ctx, a); err != nil {
		t.Fatal(err)
	}
	f.editConfig("[profiles.jobs]\nservices = [\"worker\"]\n", "")
	if _, err := upOp(ctx, f); err == nil || !strings.Contains(err.Error(), "runs profile jobs, as its last up chose") || !strings.Contains(err.Error(), "up --all") {
		t.Errorf("a plain up after the profile left binky.toml: %v; want it refused, naming the profile and up --all", err)
	}
}

// TestResetKeepsToTheSelection: reset of a world whose profile leaves its
// slice out makes no slice, and says why when asked for that one.
func TestResetKeepsToTheSelection(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, profileWorld)
	if _, err := f.up(ctx, api.UpArgs{Dir: f.wt, Env: f.env, Profile: "frontend"}); err != nil {
		t.Fatalf("up --profile frontend: %v\n%s", err, f.said)
	}
	f.fa.takeCalls()
	if _, err := f.reset(ctx, api.ResetArgs{WorldRef: f.ref()}); err == nil {
		t.Error("reset of a world whose profile has no slice succeeded; want it to say there is nothing to reset")
	}
	_, err := f.reset(ctx, api.ResetArgs{WorldRef: f.ref(), Service: "db"})
	if err == nil || !strings.Contains(err.Error(), "selection") {
		t.Errorf("reset db, left out by the profile: %v; want a refusal naming the selection", err)
	}
	f.wantCalls() // no slice made, none dropped
	if names := f.fa.sliceNames(); len(names) != 0 {
		t.Errorf("the fake servers hold %v; want no slice (db is left out)", names)
	}
}
