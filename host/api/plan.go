package api

import "fmt"

// Plan is what up does (or, with --dry-run, would do) to a world that
// exists: each list in start order (Stop in reverse). host/world/plan
// computes it and host/world applies exactly it; it is a wire type so that
// up and status carry it as is.
type Plan struct {
	Stop []PlanStep `json:"stop,omitempty"`
	// Ports is the world's port block growing or moving (Service is
	// empty: a step of the world); Setup is [worktree] setup running
	// again because its commands or inputs changed.
	Ports []PlanStep `json:"ports,omitempty"`
	Setup []PlanStep `json:"setup,omitempty"`
	// Provision makes a slice; Reconfigure hands an existing slice its
	// adapter's changed config; Migrate runs a slice's migrate again
	// because its command or inputs changed; Verify checks that a slice
	// kept is still on its server (and rebuilds it if it vanished).
	Provision   []PlanStep `json:"provision,omitempty"`
	Reconfigure []PlanStep `json:"reconfigure,omitempty"`
	Migrate     []PlanStep `json:"migrate,omitempty"`
	Verify      []PlanStep `json:"verify,omitempty"`
	// Prune are the slices of services removed from binky.toml that up
	// --prune destroys; Keep the ones it keeps until binky remove.
	Prune   []PlanStep `json:"prune,omitempty"`
	Restart []PlanStep `json:"restart,omitempty"`
	Start   []PlanStep `json:"start,omitempty"`
	// Update records a running service's new URL (https turned on or
	// off): nothing restarts for it.
	Update []PlanStep `json:"update,omitempty"`
	Keep   []PlanStep `json:"keep,omitempty"`
	// Stale names what up leaves as it is and another verb fixes: a slice
	// cloned from a template whose golden key has changed since (binky
	// reset clones it from the current one).
	Stale []PlanStep `json:"stale,omitempty"`
	// Skip names each service of binky.toml the world's selection leaves
	// out (up --profile, --only, --except): up does not start it, stops it
	// if it runs (Stop says so), and keeps its record and slice. No change
	// by itself.
	Skip []PlanStep `json:"skip,omitempty"`
	// Wait names each wake service (wake = true) that does not run: up
	// records it without starting it, and its first request through the
	// proxy starts it. No change by itself.
	Wait []PlanStep `json:"wait,omitempty"`
}

// PlanStep is one thing a plan does to one service (or, with Service
// empty, to the world), and why. From and To, when set, are what changes
// (a port block, a template).
type PlanStep struct {
	Service string `json:"service,omitempty"`
	Why     string `json:"why"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
}

// Empty reports whether the plan changes nothing: kept slices, the slices
// it would only verify and stale ones are no change.
func (p Plan) Empty() bool {
	return len(p.Stop)+len(p.Ports)+len(p.Setup)+len(p.Provision)+len(p.Reconfigure)+len(p.Migrate)+
		len(p.Prune)+len(p.Restart)+len(p.Start)+len(p.Update) == 0
}

// Lines renders the plan for people, one step a line, in the order apply
// carries them out.
func (p Plan) Lines() []string {
	var out []string
	add := func(verb string, steps []PlanStep) {
		for _, s := range steps {
			who := s.Service
			if who == "" {
				who = "world"
			}
			out = append(out, fmt.Sprintf("%-9s %s: %s", verb, who, s.Why))
		}
	}
	add("stop", p.Stop)
	add("prune", p.Prune)
	add("ports", p.Ports)
	add("setup", p.Setup)
	add("provision", p.Provision)
	add("reconfig", p.Reconfigure)
	add("migrate", p.Migrate)
	add("verify", p.Verify)
	add("restart", p.Restart)
	add("start", p.Start)
	add("update", p.Update)
	add("keep", p.Keep)
	add("stale", p.Stale)
	add("skip", p.Skip)
	add("wait", p.Wait)
	return out
}
