//go:build windows

package doctor

import (
	"context"

	"github.com/binkyhq/binky/host/internal/winjob"
)

// checkJob says whether the daemon binky starts from here can leave the
// job this process runs in (host/ctl starts it with
// CREATE_BREAKAWAY_FROM_JOB where the job allows it): an SSH session, a CI
// step and some terminals run their commands in a job that kills on
// close, and a daemon left in it dies, with its supervision of every
// world, when that session ends.
func checkJob(_ context.Context, _ *Env) []Finding {
	p, err := winjob.CurrentParent()
	if err != nil {
		return []Finding{warn("", "cannot tell whether a daemon started from here outlives this session: %v", err)}
	}
	if !p.InJob {
		return []Finding{ok("binky runs in no job: a daemon started from here outlives this session")}
	}
	can, err := winjob.CanBreakaway()
	switch {
	case err != nil:
		return []Finding{warn("", "binky runs in a job, and whether a child may leave it is unknown: %v", err)}
	case can:
		return []Finding{ok("binky runs in a job that lets its children leave it: the daemon starts outside it and outlives this session")}
	default:
		return []Finding{fail("start the daemon from a session outside this job (`binky daemon start` in a desktop terminal), or have the job allow breakaway (JOB_OBJECT_LIMIT_BREAKAWAY_OK)",
			"binky runs in a job that forbids leaving it (an SSH session, a CI step): a daemon started from here stays in the job and dies when it closes or is terminated; every world then loses its supervision (its services keep running, in their own jobs, until a daemon started elsewhere re-adopts them)")}
	}
}
