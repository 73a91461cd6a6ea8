package plan

import (
	"slices"

	"github.com/binkyhq/binky/host/api"
)

// Service is one service of the config being brought up, in start order.
type Service struct {
	Name string
	// Cmd is a supervised process; otherwise an adapter service (a slice).
	Cmd bool
	// Hash is the service's rendered spec hashed (command, its env from
	// binky.toml and env files, cwd, ports, health, restart and stop
	// settings, token values; never the caller's whole environment).
	Hash      string
	DependsOn []string
}

// Recorded is what the registry and the supervisor say of a service of the
// running world.
type Recorded struct {
	Cmd bool
	// Hash is the spec hash recorded when it last started; "" for one
	// started by a binky that did not record it (it is not restarted for
	// that alone).
	Hash string
	// Live: a cmd service's process runs (starting, running, unhealthy or
	// backing off); an adapter service's slice is provisioned.
	Live bool
}

// Plan and Step are the wire's (host/api): up --dry-run and status carry
// the plan Compute returns as it is.
type (
	Plan = api.Plan
	Step = api.PlanStep
)

// Compute is the plan that takes a world whose services are have to the
// config want (in start order). prune destroys the slices of adapter
// services no longer in want instead of keeping them.
func Compute(want []Service, have map[string]Recorded, prune bool) Plan {
	var p Plan
	wanted := map[string]bool{}
	changed := map[string]string{} // service → why it (re)starts or was rebuilt
	for _, s := range want {
		wanted[s.Name] = true
		r, ok := have[s.Name]
		switch {
		case !s.Cmd && (!ok || !r.Live || r.Cmd):
			why := "new in binky.toml"
			if ok {
				why = "its slice is not provisioned"
			}
			p.Provision = append(p.Provision, Step{Service: s.Name, Why: why})
			changed[s.Name] = why
		case !s.Cmd:
		case !ok || r.Cmd != s.Cmd:
			p.Start = append(p.Start, Step{Service: s.Name, Why: "new in binky.toml"})
			changed[s.Name] = "new"
		case !r.Live:
			p.Start = append(p.Start, Step{Service: s.Name, Why: "not running"})
			changed[s.Name] = "starts"
		case r.Hash != "" && r.Hash != s.Hash:
			p.Restart = append(p.Restart, Step{Service: s.Name, Why: "its config changed"})
			changed[s.Name] = "changed"
		default:
			// A running service restarts when something it depends on is
			// new, rebuilt or restarts: it would hold the old one's
			// connections and state.
			for _, dep := range s.DependsOn {
				if _, hit := changed[dep]; hit {
					p.Restart = append(p.Restart, Step{Service: s.Name, Why: "it depends on " + dep + ", which changes"})
					changed[s.Name] = "dependency"
					break
				}
			}
		}
	}
	var gone []string
	for name := range have {
		if !wanted[name] {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		r := have[name]
		switch {
		case r.Cmd && r.Live:
			p.Stop = append(p.Stop, Step{Service: name, Why: "removed from binky.toml"})
		case r.Cmd:
		case prune:
			p.Prune = append(p.Prune, Step{Service: name, Why: "removed from binky.toml; up --prune destroys its slice"})
		default:
			p.Keep = append(p.Keep, Step{Service: name, Why: "removed from binky.toml; its slice is kept until binky remove or up --prune"})
		}
	}
	return p
}
