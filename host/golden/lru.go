package golden

import (
	"slices"

	"github.com/binkyhq/binky/sdk/names"
)

// DefaultKeep is how many templates per clone_from a project keeps when
// binky.toml does not say ([project] golden_keep).
const DefaultKeep = 3

// Group is the set of templates that compete for golden_keep places: one
// project's templates for one clone_from, of one adapter on one server.
type Group struct {
	Project, CloneFrom, Adapter, Server string
}

// Has reports whether r belongs to g. A legacy marker belongs when its name
// is the old template name of the project and clone_from (its server was
// never recorded, so any server matches).
func (g Group) Has(r *Record) bool {
	if r.Adapter != g.Adapter {
		return false
	}
	if r.Legacy {
		return r.Slice == names.Golden(g.Project, g.CloneFrom)
	}
	return r.Project == g.Project && r.CloneFrom == g.CloneFrom && r.Server == g.Server
}

// Evict picks the records of g to drop so that at most keep remain: the
// least recently used go first, legacy markers before any of them, and
// the template named keepSlice (the one just built or used) always stays.
// keep below 1 counts as 1.
func Evict(recs []*Record, g Group, keep int, keepSlice string) []*Record {
	if keep < 1 {
		keep = 1
	}
	var in []*Record
	for _, r := range recs {
		if g.Has(r) && r.Slice != keepSlice {
			in = append(in, r)
		}
	}
	slices.SortStableFunc(in, func(a, b *Record) int {
		if a.Legacy != b.Legacy {
			if a.Legacy {
				return 1
			}
			return -1
		}
		if c := b.LastUsed.Compare(a.LastUsed); c != 0 {
			return c
		}
		return b.Created.Compare(a.Created)
	})
	// keepSlice holds one of the keep places.
	if len(in) <= keep-1 {
		return nil
	}
	return in[keep-1:]
}
