package golden

import (
	"strings"

	"github.com/binkyhq/binky/sdk/names"
)

// Name is the slice name of a project's template for clone_from with the
// key sum: names.Golden(project, cloneFrom) then "_" and the key's first 8
// hex digits, "shop_golden_golden_3f2a9c01". When that passes
// names.MaxSlice (PostgreSQL's 63 bytes) the head is cut, never the hash,
// so templates of different keys never share a name. A worktree's slice
// never ends in "_" and 8 hex digits after a non-'_' byte the way this
// does (hashed slice names end "__" and 6), and plain ones never start
// "<project>_golden_".
func Name(project, cloneFrom, sum string) string {
	tail := "_" + Short(sum)
	head := names.Golden(project, cloneFrom)
	if len(head)+len(tail) > names.MaxSlice {
		head = strings.TrimRight(head[:names.MaxSlice-len(tail)], "_")
	}
	return head + tail
}
