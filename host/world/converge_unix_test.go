//go:build !windows

package world

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/internal/gittest"
)

// convergeWorld is the world TestUpConverges edits between ups: a slice
// with a migrate reading migrations/, an api (url, so a port) on it, a web
// on the api, a side service on its own port, and a [worktree] setup
// reading deps.txt. $HOLD counts how often setup and migrate ran.
const convergeWorld = `
[project]
name = "cv"
port_range = PORTRANGE

[worktree]
setup  = ['echo run >> "$HOLD/setup-runs"']
inputs = ["deps.txt"]

[services.db]
adapter = "fake"
config  = { size = "small" }
migrate = 'echo run >> "$HOLD/migrate-runs"'
inputs  = ["migrations/**"]

[services.api]
cmd        = 'exec sleep 100711'
url        = "api"
depends_on = ["db"]
env        = { DB = "${db.url}" }
health     = { exec = "true" }

[services.web]
cmd        = 'exec sleep 100712'
ports      = ["http"]
depends_on = ["api"]

[services.side]
cmd   = 'exec sleep 100713'
ports = ["http"]
`

// TestUpConverges edits a running world's binky.toml (and the files its
// setup and migrate read) as users do on their second day, and checks
// that up --dry-run names each change, and that up does exactly that:
// the services it must restart restart, the others keep their process
// and their ports, and status, env and the registry tell the truth.
func TestUpConverges(t *testing.T) {
	gittest.Isolate(t)
	type edit struct {
		name string
		do   func(f *fixture)
		// plan: lines up --dry-run prints (each a part of one line)
		plan    []string
		restart []string // the services that get a new process
		check   func(t *testing.T, f *fixture, before map[string]map[string]int)
	}
	edits := []edit{
		{
			name: "a service added takes new ports; the others keep theirs",
			do: func(f *fixture) {
				f.appendConfig("\n[services.mail]\ncmd = 'exec sleep 100714'\nports = [\"smtp\"]\n")
			},
			plan: []string{"start     mail: new in binky.toml"},
			check: func(t *testing.T, f *fixture, before map[string]map[string]int) {
				after := f.ports()
				for name, p := range before {
					if !maps.Equal(after[name], p) {
						t.Errorf("%s moved from %v to %v; a service added must not move the others", name, p, after[name])
					}
				}
				if len(after["mail"]) != 1 {
					t.Errorf("mail has ports %v; want one", after["mail"])
				}
				for _, p := range after["mail"] {
					for name, q := range before {
						for _, o := range q {
							if o == p {
								t.Errorf("mail got port %d, which %s holds", p, name)
							}
						}
					}
				}
			},
		},
		{
			name: "a service added where the block cannot grow: the world moves, and says so",
			do: func(f *fixture) {
				_, hi := f.block()
				f.holdPort(hi + 1)
				f.appendConfig("\n[services.mail]\ncmd = 'exec sleep 100714'\nports = [\"smtp\"]\n")
			},
			plan:    []string{"ports     world: moves: it needs 4 ports", "restart   api: the world's port block moves", "start     mail: new in binky.toml"},
			restart: []string{"api", "web", "side"},
			check: func(t *testing.T, f *fixture, before map[string]map[string]int) {
				lo, hi := f.block()
				for name, ps := range f.ports() {
					for _, p := range ps {
						if p < lo || p > hi {
							t.Errorf("%s has port %d outside the world's block %d-%d", name, p, lo, hi)
						}
					}
				}
				if after := f.ports(); maps.Equal(after["api"], before["api"]) {
					t.Errorf("api kept its ports %v; the block moved", after["api"])
				}
			},
		},
		{
			name: "a service removed is stopped; nothing is renumbered",
			do: func(f *fixture) {
				f.editConfig("[services.side]\ncmd   = 'exec sleep 100713'\nports = [\"http\"]\n", "")
			},
			plan: []string{"stop      side: removed from binky.toml"},
			check: func(t *testing.T, f *fixture, before map[string]map[string]int) {
				after := f.ports()
				for _, name := range []string{"api", "web"} {
					if !maps.Equal(after[name], before[name]) {
						t.Errorf("%s moved from %v to %v when side was removed", name, before[name], after[name])
					}
				}
				if _, ok := after["side"]; ok {
					t.Errorf("side is still recorded: %v", after["side"])
				}
			},
		},
		{
			name: "the adapter's config changed: the slice is reconfigured, what uses it restarts",
			do: func(f *fixture) {
				f.editConfig(`config  = { size = "small" }`, `config  = { size = "small", owner_role = true }`)
			},
			plan:    []string{"reconfig  db: its adapter config changed", "restart   api: it depends on db", "restart   web: it depends on api"},
			restart: []string{"api", "web"},
			check: func(t *testing.T, f *fixture, _ map[string]map[string]int) {
				if got := f.fa.sliceConfig("cv_feat"); got["owner_role"] != true {
					t.Errorf("the slice's config is %v; want owner_role handed to the adapter", got)
				}
				if env := f.processEnv("api"); !strings.Contains(env, "DB=fake://cv_feat_owner@cv_feat") {
					t.Errorf("api runs with %q; want the slice's new address", env)
				}
			},
		},
		{
			name:    "a migration merged: migrate runs again, what uses the slice restarts",
			do:      func(f *fixture) { f.write(filepath.Join(f.wt, "migrations", "002.sql"), "alter table t add c int;\n") },
			plan:    []string{"migrate   db: its migrate command or inputs changed", "restart   api: it depends on db"},
			restart: []string{"api", "web"},
			check: func(t *testing.T, f *fixture, _ map[string]map[string]int) {
				if n := f.count("migrate-runs"); n != 2 {
					t.Errorf("migrate ran %d times; want 2 (the first up and this one)", n)
				}
			},
		},
		{
			name:    "setup inputs changed: setup runs again before the services restart",
			do:      func(f *fixture) { f.write(filepath.Join(f.wt, "deps.txt"), "left-pad 2\n") },
			plan:    []string{"setup     world: its commands or inputs changed", "restart   api: [worktree] setup runs again"},
			restart: []string{"api", "web", "side"},
			check: func(t *testing.T, f *fixture, _ map[string]map[string]int) {
				if n := f.count("setup-runs"); n != 2 {
					t.Errorf("setup ran %d times; want 2", n)
				}
			},
		},
		{
			name: "https turned on: the URL is recorded, nothing restarts",
			do:   func(f *fixture) { f.editConfig(`port_range = `, "https = true\nport_range = ") },
			plan: []string{"update    api: its URL changes"},
			check: func(t *testing.T, f *fixture, _ map[string]map[string]int) {
				w, err := f.e.Status(context.Background(), api.StatusArgs{})
				if err != nil {
					t.Fatal(err)
				}
				for _, sv := range w.Worlds[0].Services {
					if sv.Name == "api" && !strings.HasPrefix(sv.URL, "https://") {
						t.Errorf("status says api is at %q; want its https URL", sv.URL)
					}
				}
			},
		},
	}
	for _, ed := range edits {
		t.Run(ed.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, convergeWorld)
			f.write(filepath.Join(f.wt, "deps.txt"), "left-pad 1\n")
			if err := os.MkdirAll(filepath.Join(f.wt, "migrations"), 0o755); err != nil {
				t.Fatal(err)
			}
			f.write(filepath.Join(f.wt, "migrations", "001.sql"), "create table t (id int);\n")
			upFirst(t, f)
			before, ports := f.pids(), f.ports()

			ed.do(f)
			dry, err := f.up(ctx, api.UpArgs{Dir: f.wt, Env: f.env, DryRun: true})
			if err != nil {
				t.Fatalf("up --dry-run: %v", err)
			}
			lines := strings.Join(dry.Plan.Lines(), "\n")
			for _, want := range ed.plan {
				if !strings.Contains(lines, want) {
					t.Errorf("up --dry-run does not say %q:\n%s", want, lines)
				}
			}
			if got := f.pids(); !maps.Equal(got, before) {
				t.Fatalf("up --dry-run changed processes: %v → %v", before, got)
			}

			f.fa.takeCalls()
			if _, err := upOp(ctx, f); err != nil {
				t.Fatalf("up after the edit: %v\n%s", err, f.said)
			}
			// Apply does what the plan says and nothing else: the slice is
			// kept in each edit, so its adapter is asked to check it (and
			// hand it its config), never to make or drop it.
			f.wantCalls("provision cv_feat", "resolve cv_feat")
			after := f.pids()
			for name, pid := range before {
				_, gone := after[name]
				restarted := strings.Contains(" "+strings.Join(ed.restart, " ")+" ", " "+name+" ")
				switch {
				case !gone:
				case restarted && after[name] == pid:
					t.Errorf("%s kept pid %d; the plan restarts it", name, pid)
				case !restarted && after[name] != pid:
					t.Errorf("%s was restarted (%d → %d); the plan keeps it", name, pid, after[name])
				}
			}
			f.wantAlive(after, keysOf(after)...)
			f.wantOnlyLive(after)
			if ed.check != nil {
				ed.check(t, f, ports)
			}
			// The up after that has nothing to do.
			again, err := upOp(ctx, f)
			if err != nil || !again.Noop {
				t.Errorf("the next up: noop %v, %v; want nothing to do\n%s", again != nil && again.Noop, err, strings.Join(again.Plan.Lines(), "\n"))
			}
		})
	}
}

// appendConfig adds text to the worktree's binky.toml.
func (f *fixture) appendConfig(text string) {
	f.t.Helper()
	path := filepath.Join(f.wt, "binky.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write(path, string(b)+text)
}

// ports maps each cmd service of the world to the ports recorded for it.
func (f *fixture) ports() map[string]map[string]int {
	f.t.Helper()
	svcs, err := f.reg.Services(context.Background(), f.record().ID)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]map[string]int{}
	for _, sv := range svcs {
		if sv.Kind == registry.KindCmd {
			out[sv.Name] = sv.Ports
		}
	}
	return out
}

// count is how many lines the file $HOLD/name has.
func (f *fixture) count(name string) int {
	b, _ := os.ReadFile(filepath.Join(f.hold, name))
	return strings.Count(string(b), "\n")
}

// processEnv is the environment of a service's process, one variable a
// line.
func (f *fixture) processEnv(svc string) string {
	f.t.Helper()
	pid := f.pids()[svc]
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		f.t.Fatalf("read the environment of %s (pid %d): %v", svc, pid, err)
	}
	return strings.ReplaceAll(string(b), "\x00", "\n")
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// block is the world's port block.
func (f *fixture) block() (lo, hi int) {
	f.t.Helper()
	rec := f.record()
	lo, hi, err := f.e.ports.Block(context.Background(), rec.Project, rec.Name)
	if err != nil || lo == 0 {
		f.t.Fatalf("the world has no port block: %v", err)
	}
	return lo, hi
}

// holdPort listens on port, as another program would, until the test
// ends.
func (f *fixture) holdPort(port int) {
	f.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		f.t.Fatalf("hold port %d: %v", port, err)
	}
	f.t.Cleanup(func() { l.Close() })
}

// cloneWorld is a world whose slice is cloned from a golden template
// built by a migrate that reads migrations/.
const cloneWorld = `
[project]
name = "gk"
port_range = PORTRANGE

[services.db]
adapter    = "fake"
clone_from = "main"
migrate    = 'echo run >> "$HOLD/migrate-runs"'
inputs     = ["migrations/**"]

[services.api]
cmd        = 'exec sleep 100715'
depends_on = ["db"]
env        = { DB = "${db.url}" }
`

// TestStaleGoldenKeyNamedAndReset: after a merge that adds a migration,
// up names the template as stale and migrates the slice in place; reset
// clones it from a template built for the current key, re-runs a setup
// whose inputs changed, and the stale note is gone (issue 39 repro 4).
func TestStaleGoldenKeyNamedAndReset(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, cloneWorld)
	if err := os.MkdirAll(filepath.Join(f.wt, "migrations"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.wt, "migrations", "001.sql"), "create table t (id int);\n")
	upFirst(t, f)
	f.write(filepath.Join(f.wt, "migrations", "002.sql"), "alter table t add c int;\n")

	dry, err := f.up(ctx, api.UpArgs{Dir: f.wt, Env: f.env, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(dry.Plan.Lines(), "\n")
	for _, want := range []string{"migrate   db: its migrate command or inputs changed", "stale     db: golden key changed (template ", "restart   api: it depends on db"} {
		if !strings.Contains(lines, want) {
			t.Errorf("up --dry-run does not say %q:\n%s", want, lines)
		}
	}
	if _, err := upOp(ctx, f); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	f.fa.takeCalls()
	if _, err := f.reset(ctx, api.ResetArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("reset: %v\n%s", err, f.said)
	}
	calls := f.fa.takeCalls()
	t.Logf("reset calls: %v", calls)
	var built, cloned bool
	for _, c := range calls {
		built = built || c.Verb == "provision" && strings.HasPrefix(c.Slice, "gk_golden_main_")
		cloned = cloned || c.Verb == "clone"
	}
	if !built || !cloned {
		t.Errorf("reset built a template %v, cloned %v; want a template built for the new key and the slice cloned from it", built, cloned)
	}
	after, err := f.up(ctx, api.UpArgs{Dir: f.wt, Env: f.env, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := strings.Join(after.Plan.Lines(), "\n"); strings.Contains(l, "stale") || !after.Noop {
		t.Errorf("after reset, up --dry-run says:\n%s\nwant nothing to do", l)
	}
}

// TestEnvUsesRecordedPorts: a service removed leaves a hole in the block;
// the services after it keep their ports, and env hands out the ports
// they listen on, not a fresh layout of binky.toml.
func TestEnvUsesRecordedPorts(t *testing.T) {
	gittest.Isolate(t)
	const cfg = `
[project]
name = "hole"
port_range = PORTRANGE

[agents]
expose = ["c"]

[services.a]
cmd   = 'exec sleep 100716'
ports = ["http"]

[services.b]
cmd   = 'exec sleep 100717'
ports = ["http"]

[services.c]
cmd   = 'exec sleep 100718'
ports = ["http"]
`
	ctx := context.Background()
	f := newFixture(t, cfg)
	upFirst(t, f)
	before := f.ports()["c"]["http"]
	f.editConfig("[services.b]\ncmd   = 'exec sleep 100717'\nports = [\"http\"]\n", "")
	if _, err := upOp(ctx, f); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	if now := f.ports()["c"]["http"]; now != before {
		t.Fatalf("c moved from %d to %d when b was removed", before, now)
	}
	res, err := f.e.Exposed(ctx, f.record())
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(before); res.Direct["c"] != want {
		t.Errorf("env says c is at %q; it listens at %s", res.Direct["c"], want)
	}
}
