package main

import (
	"slices"
	"testing"

	"github.com/alecthomas/kong"
)

// binky run defaults to the world you stand in, like every verb that takes
// a world: `binky run -- make test` (issue 40 item 6).
func TestRunWorldIsOptional(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		world string
		argv  []string
	}{
		{[]string{"run", "--", "make", "test"}, "", []string{"make", "test"}},
		{[]string{"run", "-q", "--", "ls", "-l"}, "", []string{"ls", "-l"}},
		{[]string{"run", "feat/a", "--", "make", "test"}, "feat/a", []string{"make", "test"}},
		{[]string{"run", ".", "--", "go", "test", "--", "-v"}, "", []string{"go", "test", "--", "-v"}},
		{[]string{"run", "--project", "shop", "w", "--", "true"}, "w", []string{"true"}},
		{[]string{"run", "--", "echo", "--", "x"}, "", []string{"echo", "--", "x"}},
	} {
		var g grammar
		p, err := kong.New(&g)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(tc.args); err != nil {
			t.Errorf("parse %q: %v", tc.args, err)
			continue
		}
		world, argv := runWorld(tc.args, g.Run.Worktree, g.Run.Argv)
		if world != tc.world || !slices.Equal(argv, tc.argv) {
			t.Errorf("%q: world %q, command %q; want %q, %q", tc.args, world, argv, tc.world, tc.argv)
		}
	}
}
