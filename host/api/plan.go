package api

import "fmt"

// Plan is what up does (or, with --dry-run, would do) to a world that
// exists: each list in start order (Stop in reverse). host/world/plan
// computes it; it is a wire type so that up and status carry it as is.
type Plan struct {
	Start     []PlanStep `json:"start,omitempty"`
	Restart   []PlanStep `json:"restart,omitempty"`
	Stop      []PlanStep `json:"stop,omitempty"`
	Provision []PlanStep `json:"provision,omitempty"`
	// Keep are slices of services removed from binky.toml: kept until
	// binky remove, or up --prune.
	Keep []PlanStep `json:"keep,omitempty"`
	// Prune are those slices when up --prune destroys them.
	Prune []PlanStep `json:"prune,omitempty"`
}

// PlanStep is one thing a plan does to one service, and why.
type PlanStep struct {
	Service string `json:"service"`
	Why     string `json:"why"`
}

// Empty reports whether the plan changes nothing that runs (kept slices
// are no change).
func (p Plan) Empty() bool {
	return len(p.Start)+len(p.Restart)+len(p.Stop)+len(p.Provision)+len(p.Prune) == 0
}

// Lines renders the plan for people, one step a line.
func (p Plan) Lines() []string {
	var out []string
	add := func(verb string, steps []PlanStep) {
		for _, s := range steps {
			out = append(out, fmt.Sprintf("%-9s %s: %s", verb, s.Service, s.Why))
		}
	}
	add("stop", p.Stop)
	add("provision", p.Provision)
	add("prune", p.Prune)
	add("restart", p.Restart)
	add("start", p.Start)
	add("keep", p.Keep)
	return out
}
