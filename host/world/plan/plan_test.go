package plan

import (
	"strings"
	"testing"
)

// The table prints the plan of each config-before/config-after pair as up
// --dry-run shows it.
func TestCompute(t *testing.T) {
	db := Service{Name: "db", Config: NoConfig, Migrate: "m1"}
	web := Service{Name: "web", Cmd: true, Hash: "h1", DependsOn: []string{"db"}, Ports: map[string]int{"http": 3000}, URL: "http://web.w.p.localhost"}
	worker := Service{Name: "worker", Cmd: true, Hash: "w1", DependsOn: []string{"web"}}
	running := map[string]Recorded{
		"db":     {Live: true, Config: NoConfig, Migrate: "m1"},
		"web":    {Cmd: true, Hash: "h1", Live: true, Ports: map[string]int{"http": 3000}, URL: "http://web.w.p.localhost"},
		"worker": {Cmd: true, Hash: "w1", Live: true},
	}
	with := func(s Service, edit func(*Service)) Service { edit(&s); return s }
	have := func(edit func(map[string]Recorded)) map[string]Recorded {
		m := map[string]Recorded{}
		for k, v := range running {
			m[k] = v
		}
		edit(m)
		return m
	}
	tests := []struct {
		name  string
		want  []Service
		have  map[string]Recorded
		world World
		plan  string // Lines, one a line
		empty bool
	}{
		{name: "nothing changed: the slice is only verified",
			want: []Service{db, web, worker}, have: running, empty: true,
			plan: "verify    db: kept; checked on its server"},
		{name: "a command changed: it and its dependents restart",
			want: []Service{db, with(web, func(s *Service) { s.Hash = "h2" }), worker}, have: running,
			plan: `verify    db: kept; checked on its server
restart   web: its config changed
restart   worker: it depends on web, which changes`},
		{name: "a service added starts alone; the ports of the others stay",
			want: []Service{db, web, worker, {Name: "mail", Cmd: true, Hash: "m", Ports: map[string]int{"smtp": 3001}}}, have: running,
			world: World{Block: "3000-3000", NewBlock: "3000-3001", BlockWhy: "grows in place for the new ports"},
			plan: `ports     world: grows in place for the new ports
verify    db: kept; checked on its server
start     mail: new in binky.toml`},
		{name: "the block moves: every service whose ports change restarts",
			want: []Service{db, web, worker, {Name: "mail", Cmd: true, Ports: map[string]int{"smtp": 3001}}}, have: running,
			world: World{Block: "3000-3000", NewBlock: "elsewhere", BlockWhy: "moves: the ports after 3000 are taken", Moves: true},
			plan: `ports     world: moves: the ports after 3000 are taken
verify    db: kept; checked on its server
restart   web: the world's port block moves
restart   worker: it depends on web, which changes
start     mail: new in binky.toml`},
		{name: "ports renumbered by hand restart their service",
			want: []Service{db, with(web, func(s *Service) { s.Ports = map[string]int{"http": 3001} }), worker}, have: running,
			plan: `verify    db: kept; checked on its server
restart   web: its ports move: 3000 → 3001
restart   worker: it depends on web, which changes`},
		{name: "a service removed is stopped; nothing is renumbered",
			want: []Service{db, web}, have: running,
			plan: `stop      worker: removed from binky.toml
verify    db: kept; checked on its server`},
		{name: "an adapter service removed keeps its slice",
			want: []Service{with(web, func(s *Service) { s.DependsOn = nil }), worker}, have: running, empty: true,
			plan: "keep      db: removed from binky.toml; its slice is kept until binky remove or up --prune"},
		{name: "up --prune destroys it",
			want: []Service{with(web, func(s *Service) { s.DependsOn = nil }), worker}, have: running, world: World{Prune: true},
			plan: "prune     db: removed from binky.toml; up --prune destroys its slice"},
		{name: "a slice not provisioned is built and its dependents restart",
			want: []Service{db, web, worker}, have: have(func(m map[string]Recorded) { m["db"] = Recorded{} }),
			plan: `provision db: its slice is not provisioned
restart   web: it depends on db, which changes
restart   worker: it depends on web, which changes`},
		{name: "the adapter's config changed: the slice is reconfigured, its dependents restart",
			want: []Service{with(db, func(s *Service) { s.Config = `{"owner_role":true}` }), web, worker}, have: running,
			plan: `reconfig  db: its adapter config changed
restart   web: it depends on db, which changes
restart   worker: it depends on web, which changes`},
		{name: "a url added to a running service is recorded",
			want: []Service{db, web, worker}, have: have(func(m map[string]Recorded) { r := m["web"]; r.URL = ""; m["web"] = r }),
			plan: `verify    db: kept; checked on its server
update    web: its URL changes`},
		{name: "a url removed: no longer proxied",
			want: []Service{db, with(web, func(s *Service) { s.URL = "" }), worker}, have: running,
			plan: `verify    db: kept; checked on its server
update    web: it is no longer proxied`},
		{name: "a service that reads a slice's tokens without depending on it restarts with it",
			want: []Service{with(db, func(s *Service) { s.Config = `{"owner_role":true}` }), with(web, func(s *Service) { s.DependsOn, s.Uses = nil, []string{"db"} })},
			have: running,
			plan: `stop      worker: removed from binky.toml
reconfig  db: its adapter config changed
restart   web: it reads db's address, which changes`},
		{name: "a migration added: migrate runs again, its dependents restart",
			want: []Service{with(db, func(s *Service) { s.Migrate = "m2" }), web, worker}, have: running,
			plan: `migrate   db: its migrate command or inputs changed
restart   web: it depends on db, which changes
restart   worker: it depends on web, which changes`},
		{name: "the golden key changed: named stale, nothing else",
			want: []Service{with(db, func(s *Service) { s.Golden = "bbbbbbbbbbbbbbbb" }), web, worker},
			have: have(func(m map[string]Recorded) { r := m["db"]; r.Golden = "aaaaaaaaaaaaaaaa"; m["db"] = r }), empty: true,
			plan: `verify    db: kept; checked on its server
stale     db: golden key changed (template aaaaaaaaaaaa → bbbbbbbbbbbb); binky reset db clones it from the new one`},
		{name: "setup inputs changed: setup runs, then what runs restarts",
			want: []Service{db, web, worker}, have: running, world: World{Setup: "its commands or inputs changed"},
			plan: `setup     world: its commands or inputs changed
verify    db: kept; checked on its server
restart   web: [worktree] setup runs again
restart   worker: [worktree] setup runs again`},
		{name: "https turned on: the URL is recorded, nothing restarts",
			want: []Service{db, with(web, func(s *Service) { s.URL = "https://web.w.p.localhost" }), worker}, have: running,
			plan: `verify    db: kept; checked on its server
update    web: its URL changes`},
		{name: "a service the user stopped stays stopped",
			want: []Service{db, web, worker}, have: have(func(m map[string]Recorded) { m["worker"] = Recorded{Cmd: true, Stopped: true} }), empty: true,
			plan: "verify    db: kept; checked on its server"},
		{name: "a service not running starts; what depends on it restarts",
			want: []Service{db, web, worker}, have: have(func(m map[string]Recorded) { r := m["web"]; r.Live = false; m["web"] = r }),
			plan: `verify    db: kept; checked on its server
restart   worker: it depends on web, which changes
start     web: not running`},
		{name: "a running service the profile leaves out is stopped and skipped",
			want: []Service{db, web}, have: running, world: World{Skip: []Skipped{{"worker", "not in profile frontend"}}},
			plan: `stop      worker: not in profile frontend
verify    db: kept; checked on its server
skip      worker: not in profile frontend`},
		{name: "a service left out that does not run is only skipped: no change",
			want: []Service{db, web}, have: have(func(m map[string]Recorded) { m["worker"] = Recorded{Cmd: true} }),
			world: World{Skip: []Skipped{{"worker", "not in profile frontend"}}}, empty: true,
			plan: `verify    db: kept; checked on its server
skip      worker: not in profile frontend`},
		{name: "a new world with a profile: what is left out is skipped, never recorded",
			want: []Service{db, web}, have: map[string]Recorded{},
			world: World{Skip: []Skipped{{"worker", "not in --only web"}}},
			plan: `provision db: new in binky.toml
start     web: new in binky.toml
skip      worker: not in --only web`},
		{name: "a slice left out is kept as it is, even with --prune",
			want: []Service{with(web, func(s *Service) { s.DependsOn = nil })}, have: have(func(m map[string]Recorded) { delete(m, "worker") }),
			world: World{Prune: true, Skip: []Skipped{{"db", "left out by --except db"}}}, empty: true,
			plan: "skip      db: left out by --except db"},
		{name: "a service back in the selection starts; what depends on it restarts",
			want: []Service{db, web, worker}, have: have(func(m map[string]Recorded) {
				m["web"] = Recorded{Cmd: true, Ports: map[string]int{"http": 3000}, URL: web.URL}
			}),
			plan: `verify    db: kept; checked on its server
restart   worker: it depends on web, which changes
start     web: not running`},
		{name: "a wake service that does not run waits; a woken one is kept, restarted when it changes",
			want: []Service{db, with(web, func(s *Service) { s.Wake = true }), with(worker, func(s *Service) { s.Wake = true; s.Hash = "w2" }),
				{Name: "docs", Cmd: true, Hash: "d", Wake: true}},
			have: have(func(m map[string]Recorded) {
				m["web"] = Recorded{Cmd: true, Hash: "h1", Ports: web.Ports, URL: web.URL}
			}),
			plan: `verify    db: kept; checked on its server
restart   worker: its config changed
wait      web: starts on its first request
wait      docs: starts on its first request`},
		{name: "a wake service stopped by binky stop stays so",
			want: []Service{db, with(web, func(s *Service) { s.Wake = true }), worker},
			have: have(func(m map[string]Recorded) {
				m["web"] = Recorded{Cmd: true, Hash: "h1", Stopped: true, Ports: web.Ports, URL: web.URL}
			}), empty: true,
			plan: "verify    db: kept; checked on its server"},
		{name: "what an older binky did not record is no change",
			want: []Service{with(db, func(s *Service) { s.Config = `{"a":1}`; s.Golden = "k" }), with(web, func(s *Service) { s.Hash = "h9" }), worker},
			have: have(func(m map[string]Recorded) {
				m["db"] = Recorded{Live: true}
				m["web"] = Recorded{Cmd: true, Live: true, URL: web.URL}
			}), empty: true,
			plan: "verify    db: kept; checked on its server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.want, tt.have, tt.world)
			if lines := strings.Join(got.Lines(), "\n"); lines != tt.plan {
				t.Errorf("plan:\n%s\nwant:\n%s", lines, tt.plan)
			}
			if got.Empty() != tt.empty {
				t.Errorf("Empty() = %v; want %v", got.Empty(), tt.empty)
			}
		})
	}
}

func TestLines(t *testing.T) {
	p := Plan{Restart: []Step{{Service: "web", Why: "its config changed"}}, Keep: []Step{{Service: "db", Why: "kept"}}, Ports: []Step{{Why: "grows"}}}
	got := strings.Join(p.Lines(), "\n")
	for _, want := range []string{"restart   web: its config changed", "keep      db: kept", "ports     world: grows"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
}
