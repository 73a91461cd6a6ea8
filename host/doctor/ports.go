package doctor

import (
	"context"
	"fmt"
	"slices"

	"github.com/binkyhq/binky/host/ports"
)

// portScope is a range binky allocates world blocks from: the default one,
// or a project's port_range.
type portScope struct {
	rng [2]int
	// project and file name the binky.toml that sets the range; empty for
	// the default range.
	project, file string
}

func (s portScope) String() string {
	if s.project == "" {
		return fmt.Sprintf("binky's default range %d-%d", s.rng[0], s.rng[1])
	}
	return fmt.Sprintf("project %s's port_range %d-%d", s.project, s.rng[0], s.rng[1])
}

// fix is the one thing that ends a conflict in s.
func (s portScope) fix() string {
	if s.project == "" {
		return "stop it, or give your project a range of its own: port_range = " + suggestedRange + " under [project] in binky.toml"
	}
	return fmt.Sprintf("stop it, or give project %s another port_range in %s", s.project, s.file)
}

// checkPorts lists what listens inside binky's default port range, and
// each registered project's port_range, outside every world's block: the
// allocator steps around such ports, but a program that takes a port of a
// stopped world makes its next up move.
func checkPorts(ctx context.Context, e *Env) []Finding {
	held, known := listening()
	if !known {
		return []Finding{skip("listening ports cannot be listed on %s", e.GOOS)}
	}
	blocks, err := portBlocks(e)
	if err != nil {
		return []Finding{skip("the registry's port blocks cannot be read: %v", err)}
	}
	scopes := portScopes(ctx, e)
	// foreign[i] are the ports held in scopes[i] (each port in the first
	// scope holding it), reported at most five per scope so that one busy
	// range does not hide another.
	foreign := make([][]int, len(scopes))
	found := false
	for _, p := range held {
		if slices.ContainsFunc(blocks, func(b [2]int) bool { return p >= b[0] && p <= b[1] }) {
			continue
		}
		if i := slices.IndexFunc(scopes, func(s portScope) bool { return p >= s.rng[0] && p <= s.rng[1] }); i >= 0 {
			foreign[i] = append(foreign[i], p)
			found = true
		}
	}
	if !found {
		names := make([]string, len(scopes))
		for i, s := range scopes {
			names[i] = s.String()
		}
		return []Finding{ok("nothing else listens in %s", joinAnd(names))}
	}
	var out []Finding
	for i, s := range scopes {
		for j, p := range foreign[i] {
			if j == 5 {
				out = append(out, warn("ss -ltnp  (names every listener; stop those you started, then run binky doctor again)",
					"and %d more ports in %s are held by other programs", len(foreign[i])-5, s))
				break
			}
			owner := ports.Owner(p)
			if owner == "" {
				owner = "a process not visible to you"
			}
			out = append(out, warn(s.fix(), "port %d in %s is held by %s", p, s, owner))
		}
	}
	return out
}

// suggestedRange is the range fixes propose for a project of its own: clear
// of binky's default range, of the kernels' ephemeral ranges (Linux's
// 32768-60999, Windows' and macOS's 49152-65535), of Kubernetes' NodePorts
// (30000-32767) and of the adapters' RPC ports (48000-49151).
const suggestedRange = "[17000, 17999]"

// checkEphemeral warns when binky's default range or a registered
// project's port_range overlaps the system's ephemeral port range: any
// program's outgoing connection can take a port there.
func checkEphemeral(ctx context.Context, e *Env) []Finding {
	eph, err := ports.EphemeralRange(ctx)
	if err != nil {
		return []Finding{skip("the ephemeral port range cannot be read on %s: %v", e.GOOS, err)}
	}
	return ephemeralFindings(eph, portScopes(ctx, e))
}

// ephemeralFindings is a warning for each of scopes that overlaps eph
// (naming both ranges, the ports they share and the fix), or one ok.
func ephemeralFindings(eph ports.Ephemeral, scopes []portScope) []Finding {
	var out []Finding
	for _, s := range scopes {
		shared := eph.Overlap(s.rng)
		if len(shared) == 0 {
			continue
		}
		where := "in " + s.file
		if s.project == "" {
			where = "under [project] in binky.toml"
		}
		out = append(out, warn(where+": "+eph.Fix(s.rng),
			"%s overlaps %s at ports %s: an outgoing connection of any program can take a world's port there", s, eph, ports.RunsString(shared)))
	}
	if len(out) > 0 {
		return out
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = s.String()
	}
	return []Finding{ok("%s lie outside %s", joinAnd(names), eph)}
}

// portScopes is the default range and every registered world's
// port_range, each once, the default first.
func portScopes(ctx context.Context, e *Env) []portScope {
	out := []portScope{{rng: ports.DefaultRange()}}
	ws, err := worlds(e)
	if err != nil {
		return out
	}
	for _, w := range ws {
		cfg := worldConfig(ctx, w)
		if cfg == nil || cfg.Project.PortRange == [2]int{} {
			continue
		}
		r := cfg.Project.PortRange
		if slices.ContainsFunc(out, func(s portScope) bool { return s.rng == r }) {
			continue
		}
		out = append(out, portScope{rng: r, project: w.Project, file: cfg.File})
	}
	return out
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}
