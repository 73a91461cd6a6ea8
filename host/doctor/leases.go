package doctor

import (
	"context"
	"errors"

	"github.com/binkyhq/binky/host/ports"
)

// checkLeases looks at the machine-wide port lease store without changing
// it: a directory binky refuses (another user owns it) fails with the fix;
// each lease file binky does not count — another user's junk, a lease
// wider than a world's block, a symbolic link, a gone home's lease — is a
// warning naming the file, its owner and why; a name of this user's lease
// directory another user took is a warning too.
func checkLeases(_ context.Context, e *Env) []Finding {
	dir := e.LeaseDir
	if dir == "" {
		dir = ports.DefaultLeaseDir()
	}
	rep, err := ports.InspectLeases(dir)
	var refused *ports.DirRefusedError
	switch {
	case errors.As(err, &refused):
		return []Finding{fail(refused.Fix, "the port lease directory %s is refused: %s; until it is fixed no world gets a new port block", refused.Dir, refused.Reason)}
	case err != nil:
		return []Finding{warn("binky doctor --json, then report it with the output", "the port leases in %s cannot be read: %v", dir, err)}
	case rep.Missing:
		return []Finding{ok("the port lease directory %s does not exist yet; the first daemon makes it", rep.Dir)}
	}
	var out []Finding
	for _, s := range rep.Squatted {
		out = append(out, warn("ask root to remove it; meanwhile binky uses the next free name",
			"another user took a name of your port lease directory in %s: %s", rep.Dir, s))
	}
	for _, ig := range rep.Ignored {
		fix := "nothing to do for you: binky does not count it (its owner or root may remove it)"
		if ig.Owner == rep.Me {
			fix = "rm " + ig.Path
		}
		out = append(out, warn(fix, "%s", ig))
	}
	if rep.Omitted > 0 {
		out = append(out, warn("ls -lR "+rep.Dir, "%d more lease files in %s are ignored (only %d are listed)", rep.Omitted, rep.Dir, len(rep.Ignored)))
	}
	if len(out) == 0 {
		out = append(out, ok("%d port leases in %s, none ignored", len(rep.Counted), rep.Dir))
	}
	return out
}
