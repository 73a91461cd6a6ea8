package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/host/api"
)

// fakeNames answers completion's questions from a fixed set of worlds.
type fakeNames struct{ all []api.World }

func (f fakeNames) worlds(project string) []api.World {
	var out []api.World
	for _, w := range f.all {
		if project == "" || w.Project == project {
			out = append(out, w)
		}
	}
	return out
}

func (f fakeNames) world(name, project string) *api.World {
	for i, w := range f.all {
		if (name == "" && i == 0) || w.Worktree == name || w.Branch == name {
			if project == "" || w.Project == project {
				return &f.all[i]
			}
		}
	}
	return nil
}

func TestComplete(t *testing.T) {
	parser, err := kong.New(&grammar{}, kong.Name("binky"), kong.Vars{"version": "test"})
	if err != nil {
		t.Fatal(err)
	}
	live := fakeNames{all: []api.World{
		{Project: "shop", Worktree: "feat-a-111111", Branch: "feat/a", Services: []api.Service{{Name: "api"}, {Name: "db"}}},
		{Project: "blog", Worktree: "feat-a-222222", Branch: "feat/a", Services: []api.Service{{Name: "web"}}},
	}}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"st"}, "start status stop"},
		{[]string{"co"}, "completion"},
		{[]string{""}, "adapter adapters check completion daemon doctor down env golden init logs mcp remove reserve reset status top trust up verify"},
		{[]string{"completion", ""}, "bash fish zsh"},
		{[]string{"env", "--d"}, "--direct --dotenv"},
		{[]string{"env", ""}, "feat-a-111111 feat-a-222222 feat/a"},
		{[]string{"env", "--project", "shop", ""}, "feat-a-111111 feat/a"},
		{[]string{"env", "--project", ""}, "blog shop"},
		{[]string{"env", "--project=blog", "f"}, "feat-a-222222 feat/a"},
		{[]string{"logs", "feat-a-111111", ""}, "api db"},
		{[]string{"logs", "-n", "5", "feat-a-222222", ""}, "web"},
		{[]string{"logs", "feat-a-111111", "api", ""}, ""},
		{[]string{"reset", "feat-a-111111", "d"}, "db"},
		{[]string{"stop", "feat-a-111111", ""}, "api db"},
		{[]string{"restart", "feat-a-222222", "web", ""}, "web"},
		{[]string{"golden", ""}, "drop list rebuild"},
		{[]string{"__compl"}, ""}, // hidden
	} {
		got := strings.Join(complete(parser.Model.Node, tc.words, live), " ")
		// Verbs other helpers add are not this test's business.
		if tc.words[0] == "" {
			got = keepOnly(got, tc.want)
		}
		if got != tc.want {
			t.Errorf("complete %q = %q; want %q", tc.words, got, tc.want)
		}
	}
}

// keepOnly drops from got the words want does not have, keeping order.
func keepOnly(got, want string) string {
	w := map[string]bool{}
	for _, s := range strings.Fields(want) {
		w[s] = true
	}
	var out []string
	for _, s := range strings.Fields(got) {
		if w[s] {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// TestCompletionScripts: each script calls back __complete with the words
// after binky.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		s := completionScripts[sh]
		if !strings.Contains(s, "binky __complete -- ") {
			t.Errorf("%s script does not call binky __complete: %q", sh, s)
		}
	}
}
