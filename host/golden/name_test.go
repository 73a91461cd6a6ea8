package golden

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/names"
)

func TestName(t *testing.T) {
	sum := "3f2a9c01deadbeef"
	if got, want := Name("shop", "golden", sum), "shop_golden_golden_3f2a9c01"; got != want {
		t.Errorf("Name = %q; want %q", got, want)
	}
	long := strings.Repeat("p", 60)
	for _, tc := range []struct{ project, cloneFrom string }{
		{"shop", "golden"},
		{long, "golden"},
		{"shop", strings.Repeat("c", 32)},
		{"my-app", "base_schema"},
		{strings.Repeat("a", 40), strings.Repeat("b", 32)},
	} {
		n := Name(tc.project, tc.cloneFrom, sum)
		if !names.IsSlice(n) {
			t.Errorf("Name(%q, %q) = %q: not a slice name (at most %d bytes of [a-z0-9_])", tc.project, tc.cloneFrom, n, names.MaxSlice)
		}
		if !strings.HasSuffix(n, "_3f2a9c01") {
			t.Errorf("Name(%q, %q) = %q: the key was cut", tc.project, tc.cloneFrom, n)
		}
		if other := Name(tc.project, tc.cloneFrom, "00000000"+sum[8:]); other == n {
			t.Errorf("two keys share the name %q", n)
		}
		if names.Postgres(n) != n {
			t.Errorf("postgres would rename %q to %q", n, names.Postgres(n))
		}
	}
	// Never the slice of a worktree.
	for _, wt := range []string{"golden-golden-3f2a9c01", "golden", "main"} {
		if names.Slice("shop", wt) == Name("shop", "golden", sum) {
			t.Errorf("worktree %q has the template's name", wt)
		}
	}
}
