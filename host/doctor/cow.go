package doctor

import (
	"context"
	"strings"

	"github.com/binkyhq/binky/host/golden"
)

// checkCopyOnWrite reads how the worlds of each golden template were
// cloned, as their adapter reported it (the record's method; doctor
// links no database driver and asks no server), and says what to change
// where a server asked to clone did not share blocks: PostgreSQL 18
// clones by file_copy_method = clone, which the postgres adapter sets
// for its own session (so the server's default, copy, does not stop it),
// but a data directory on a filesystem without reflinks (ext4) makes the
// server copy every byte, silently.
func checkCopyOnWrite(_ context.Context, e *Env) []Finding {
	recs, err := golden.NewStore(e.Home).List()
	if err != nil && len(recs) == 0 {
		return []Finding{skip("the golden records cannot be read: %v", err)}
	}
	var out []Finding
	cow, cloned := 0, 0
	for _, r := range recs {
		switch golden.Sharing(r.Method) {
		case "":
			continue
		case golden.SharingCopyOnWrite:
			cow++
		case golden.SharingCopied:
			if r.Adapter == "postgres" && strings.HasPrefix(r.Method, "file_copy, ") {
				out = append(out, warn("put the PostgreSQL data directory (or a tablespace holding the template and its worlds) on a filesystem with reflinks: XFS made with mkfs.xfs -m reflink=1, btrfs, ZFS 2.2+ or APFS; docs/adapters.md#postgres",
					"the worlds of golden template %s (%s/%s) are full copies: PostgreSQL 18 was asked to clone (file_copy_method = clone) but its data directory's filesystem cannot share blocks, so every world costs the template's size on disk",
					r.Slice, r.Project, r.Service))
			}
		case golden.SharingUnverified:
			out = append(out, warn("run binky as a user who can read the server's data directory (SHOW data_directory), or check the filesystem yourself: filefrag -v on a world's files shows shared extents",
				"the worlds of golden template %s (%s/%s) were cloned by %q, which binky could not verify: the %s server's data directory is not readable here, so whether they share the template's blocks is unknown",
				r.Slice, r.Project, r.Service, r.Method, r.Adapter))
		}
		cloned++
	}
	if cloned == 0 {
		return []Finding{ok("no golden template cloned yet")}
	}
	if len(out) == 0 {
		return []Finding{ok("%d of %d cloned golden template(s) give copy-on-write worlds; the others' adapters copy by design", cow, cloned)}
	}
	return out
}
