package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestCompute(t *testing.T) {
	db := Service{Name: "db"}
	web := func(hash string) Service {
		return Service{Name: "web", Cmd: true, Hash: hash, DependsOn: []string{"db"}}
	}
	worker := Service{Name: "worker", Cmd: true, Hash: "w1", DependsOn: []string{"web"}}
	running := map[string]Recorded{
		"db":     {Live: true},
		"web":    {Cmd: true, Hash: "h1", Live: true},
		"worker": {Cmd: true, Hash: "w1", Live: true},
	}
	tests := []struct {
		name  string
		want  []Service
		have  map[string]Recorded
		prune bool
		plan  Plan
	}{
		{name: "nothing changed", want: []Service{db, web("h1"), worker}, have: running},
		{name: "a command changed: it and its dependents restart",
			want: []Service{db, web("h2"), worker}, have: running,
			plan: Plan{Restart: []Step{{Service: "web", Why: "its config changed"}, {Service: "worker", Why: "it depends on web, which changes"}}}},
		{name: "a dependent changed alone",
			want: []Service{db, web("h1"), {Name: "worker", Cmd: true, Hash: "w2", DependsOn: []string{"web"}}}, have: running,
			plan: Plan{Restart: []Step{{Service: "worker", Why: "its config changed"}}}},
		{name: "a service added",
			want: []Service{db, web("h1"), worker, {Name: "mail", Cmd: true, Hash: "m"}}, have: running,
			plan: Plan{Start: []Step{{Service: "mail", Why: "new in binky.toml"}}}},
		{name: "a service removed is stopped",
			want: []Service{db, web("h1")}, have: running,
			plan: Plan{Stop: []Step{{Service: "worker", Why: "removed from binky.toml"}}}},
		{name: "an adapter service removed keeps its slice",
			want: []Service{{Name: "web", Cmd: true, Hash: "h1"}, {Name: "worker", Cmd: true, Hash: "w1", DependsOn: []string{"web"}}}, have: running,
			plan: Plan{Keep: []Step{{Service: "db", Why: "removed from binky.toml; its slice is kept until binky remove or up --prune"}}}},
		{name: "up --prune destroys it",
			want: []Service{{Name: "web", Cmd: true, Hash: "h1"}, {Name: "worker", Cmd: true, Hash: "w1", DependsOn: []string{"web"}}}, have: running, prune: true,
			plan: Plan{Prune: []Step{{Service: "db", Why: "removed from binky.toml; up --prune destroys its slice"}}}},
		{name: "a slice not provisioned is built and its dependents restart",
			want: []Service{db, web("h1"), worker}, have: map[string]Recorded{"db": {}, "web": running["web"], "worker": running["worker"]},
			plan: Plan{Provision: []Step{{Service: "db", Why: "its slice is not provisioned"}}, Restart: []Step{{Service: "web", Why: "it depends on db, which changes"}, {Service: "worker", Why: "it depends on web, which changes"}}}},
		{name: "a stopped service starts; what depends on it restarts",
			want: []Service{db, web("h1"), worker}, have: map[string]Recorded{"db": {Live: true}, "web": {Cmd: true, Hash: "h1"}, "worker": running["worker"]},
			plan: Plan{Start: []Step{{Service: "web", Why: "not running"}}, Restart: []Step{{Service: "worker", Why: "it depends on web, which changes"}}}},
		{name: "a hash an older binky did not record is no change",
			want: []Service{db, web("h9"), worker}, have: map[string]Recorded{"db": {Live: true}, "web": {Cmd: true, Live: true}, "worker": running["worker"]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.want, tt.have, tt.prune)
			if !reflect.DeepEqual(got, tt.plan) {
				t.Errorf("plan:\n got %+v\nwant %+v", got, tt.plan)
			}
			if got.Empty() != (len(tt.plan.Start)+len(tt.plan.Restart)+len(tt.plan.Stop)+len(tt.plan.Provision)+len(tt.plan.Prune) == 0) {
				t.Errorf("Empty() = %v for %+v", got.Empty(), got)
			}
		})
	}
}

func TestLines(t *testing.T) {
	p := Plan{Restart: []Step{{Service: "web", Why: "its config changed"}}, Keep: []Step{{Service: "db", Why: "kept"}}}
	got := strings.Join(p.Lines(), "\n")
	if !strings.Contains(got, "restart   web: its config changed") || !strings.Contains(got, "keep      db: kept") {
		t.Errorf("lines:\n%s", got)
	}
}
