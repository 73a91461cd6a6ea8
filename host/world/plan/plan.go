package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/api"
)

// NoConfig is how an adapter service without config is written in
// Service.Config and Recorded.Config.
const NoConfig = "{}"

// Service is one service of the config being brought up, in start order,
// rendered against the world's recorded ports and slices.
type Service struct {
	Name string
	// Cmd is a supervised process; otherwise an adapter service (a slice).
	Cmd bool
	// Hash is a cmd service's rendered spec hashed (command, its env from
	// binky.toml and env files, cwd, ports, health, restart and stop
	// settings, token values; never the caller's whole environment).
	Hash      string
	DependsOn []string
	// Uses are the slices whose tokens a cmd service's command, env or
	// health check reads (${db.url}), depends_on or not.
	Uses []string
	// Ports are a cmd service's ports as the plan lays them out (port
	// name → port); URL is its proxied URL ("" without url).
	Ports map[string]int
	URL   string
	// Config is an adapter service's config as canonical JSON (NoConfig
	// for none); Golden the key of the template a clone_from service
	// clones from now ("" when it clones from none); Migrate a sum of its
	// migrate command and the content of its inputs ("" without migrate).
	Config, Golden, Migrate string
	// Wake: a cmd service that starts on its first proxied request
	// (wake = true); up leaves it waiting when it does not run.
	Wake bool
}

// WaitsWhy is why the plan leaves a wake service waiting.
const WaitsWhy = api.ReasonWaits

// Recorded is what the registry and the supervisor say of a service of the
// running world. An empty Hash, Config, Golden or Migrate was not recorded
// (an older binky): nothing changes for that alone.
type Recorded struct {
	Cmd  bool
	Hash string
	// Live: a cmd service's process runs (starting, running, unhealthy or
	// backing off); an adapter service's slice is provisioned.
	Live bool
	// Stopped: the user stopped this service alone (binky stop); up
	// leaves it stopped.
	Stopped                 bool
	Ports                   map[string]int
	URL                     string
	Config, Golden, Migrate string
}

// World is what the plan knows of the world as a whole.
type World struct {
	// Block and NewBlock are the world's port block before and after
	// ("lo-hi", "" for none); BlockWhy says why it changes.
	Block, NewBlock, BlockWhy string
	// Moves: the block moves elsewhere (it cannot grow in place), so every
	// service with ports restarts on new ones.
	Moves bool
	// Setup is why [worktree] setup runs again ("" when it does not).
	Setup string
	// Prune destroys the slices of adapter services no longer in the
	// config instead of keeping them.
	Prune bool
	// Skip are the services of the config the world's selection leaves
	// out (not in want), in config order, each with why ("not in profile
	// frontend"): a running one is stopped, its record and a slice kept.
	Skip []Skipped
}

// Skipped is a service of the config left out of the world's selection.
type Skipped struct {
	Name, Why string
}

// Plan and Step are the wire's (host/api): up --dry-run and status carry
// the plan Compute returns as it is.
type (
	Plan = api.Plan
	Step = api.PlanStep
)

// Compute is the plan that takes a world whose services are have to the
// config want (in start order).
func Compute(want []Service, have map[string]Recorded, w World) Plan {
	var p Plan
	if w.Block != w.NewBlock && w.Block != "" {
		p.Ports = append(p.Ports, Step{Why: w.BlockWhy, From: w.Block, To: w.NewBlock})
	}
	if w.Setup != "" {
		p.Setup = append(p.Setup, Step{Why: w.Setup})
	}
	wanted := map[string]bool{}
	changed := map[string]bool{} // a service new, rebuilt or (re)starting
	for _, s := range want {
		wanted[s.Name] = true
		r, ok := have[s.Name]
		if s.Cmd {
			planCmd(&p, s, r, ok, w, changed)
		} else {
			planSlice(&p, s, r, ok, changed)
		}
	}
	skipped := map[string]bool{}
	for _, sk := range w.Skip {
		skipped[sk.Name] = true
		p.Skip = append(p.Skip, Step{Service: sk.Name, Why: sk.Why})
		if r, ok := have[sk.Name]; ok && r.Cmd && r.Live {
			p.Stop = append(p.Stop, Step{Service: sk.Name, Why: sk.Why})
		}
	}
	var gone []string
	for name := range have {
		if !wanted[name] && !skipped[name] {
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
		case w.Prune:
			p.Prune = append(p.Prune, Step{Service: name, Why: "removed from binky.toml; up --prune destroys its slice"})
		default:
			p.Keep = append(p.Keep, Step{Service: name, Why: "removed from binky.toml; its slice is kept until binky remove or up --prune"})
		}
	}
	return p
}

// planSlice plans an adapter service: provision a slice that is not
// there; hand a kept one its changed config, or run its changed migrate;
// else verify it is still on its server. A template whose key changed
// since the slice was cloned is named stale: reset clones from the new
// one.
func planSlice(p *Plan, s Service, r Recorded, ok bool, changed map[string]bool) {
	if !ok || !r.Live || r.Cmd {
		why := "new in binky.toml"
		if ok {
			why = "its slice is not provisioned"
		}
		p.Provision = append(p.Provision, Step{Service: s.Name, Why: why})
		changed[s.Name] = true
		return
	}
	touched := false
	if r.Config != "" && orNone(r.Config) != orNone(s.Config) {
		p.Reconfigure = append(p.Reconfigure, Step{Service: s.Name, Why: "its adapter config changed", From: orNone(r.Config), To: orNone(s.Config)})
		touched = true
	}
	if r.Migrate != "" && s.Migrate != "" && r.Migrate != s.Migrate {
		p.Migrate = append(p.Migrate, Step{Service: s.Name, Why: "its migrate command or inputs changed"})
		touched = true
	}
	if !touched {
		p.Verify = append(p.Verify, Step{Service: s.Name, Why: "kept; checked on its server"})
	}
	changed[s.Name] = touched
	if r.Golden != "" && s.Golden != "" && r.Golden != s.Golden {
		p.Stale = append(p.Stale, Step{Service: s.Name, Why: fmt.Sprintf("golden key changed (template %s → %s); binky reset %s clones it from the new one", short(r.Golden), short(s.Golden), s.Name),
			From: r.Golden, To: s.Golden})
	}
}

// planCmd plans a cmd service: start one that is new or not running,
// restart one whose spec or ports changed, that depends on something
// that changes, or that setup ran again for; a running one whose URL
// alone changed is recorded with the new one.
func planCmd(p *Plan, s Service, r Recorded, ok bool, w World, changed map[string]bool) {
	switch {
	case ok && r.Stopped:
		return
	case s.Wake && (!ok || !r.Live || r.Cmd != s.Cmd):
		// Recorded (its spec and ports) but not started: the proxy starts
		// it. No change by itself, as a skip.
		p.Wait = append(p.Wait, Step{Service: s.Name, Why: WaitsWhy})
		return
	case !ok || r.Cmd != s.Cmd:
		p.Start = append(p.Start, Step{Service: s.Name, Why: "new in binky.toml"})
		changed[s.Name] = true
		return
	case !r.Live:
		p.Start = append(p.Start, Step{Service: s.Name, Why: "not running"})
		changed[s.Name] = true
		return
	}
	why := ""
	switch {
	case len(r.Ports) > 0 && w.Moves:
		why = "the world's port block moves"
	case len(r.Ports) > 0 && !maps.Equal(r.Ports, s.Ports):
		why = "its ports move: " + portList(r.Ports) + " → " + portList(s.Ports)
	case r.Hash != "" && r.Hash != s.Hash:
		why = "its config changed"
	case w.Setup != "":
		why = "[worktree] setup runs again"
	default:
		// A running service restarts when something it depends on is
		// new, rebuilt or restarts: it would hold the old one's
		// connections and state.
		for _, dep := range s.DependsOn {
			if changed[dep] {
				why = "it depends on " + dep + ", which changes"
				break
			}
		}
		for _, sl := range s.Uses {
			if why == "" && changed[sl] {
				why = "it reads " + sl + "'s address, which changes"
			}
		}
	}
	if why != "" {
		p.Restart = append(p.Restart, Step{Service: s.Name, Why: why})
		changed[s.Name] = true
		return
	}
	switch {
	case r.URL == s.URL:
	case s.URL == "":
		p.Update = append(p.Update, Step{Service: s.Name, Why: "it is no longer proxied", From: r.URL})
	default:
		p.Update = append(p.Update, Step{Service: s.Name, Why: "its URL changes", From: r.URL, To: s.URL})
	}
}

func orNone(cfg string) string {
	if cfg == "" || cfg == "null" {
		return NoConfig
	}
	return cfg
}

// short is a golden key as golden list shows it.
func short(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}

// portList writes ports in port-name order: "8080" for one, "http=8080
// grpc=8081" for several.
func portList(ports map[string]int) string {
	if len(ports) == 1 {
		for _, v := range ports {
			return strconv.Itoa(v)
		}
	}
	names := slices.Sorted(maps.Keys(ports))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Itoa(ports[n])
	}
	return strings.Join(parts, " ")
}
