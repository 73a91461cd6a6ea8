package world

import (
	"context"
	"errors"
	"github.com/binkyhq/binky/host/state"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/internal/gittest"
	"github.com/binkyhq/binky/sdk/names"
)

// TestFind: how every verb resolves the world it names (Find), over a
// temp registry and real repositories. A bare worktree name resolves in
// the caller's project; a name of several projects, asked from outside
// any, is refused with the candidates; a branch and a folded branch name
// a world; a world of a second clone claiming the caller's project name
// is refused; no name is the world of the worktree the caller stands in.
func TestFind(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	base := t.TempDir()
	repoA := gittest.Repo(t, filepath.Join(base, "a"), "acme")
	wtA := filepath.Join(base, "a.wt", "feat-a")
	gittest.Worktree(t, repoA, wtA, "feat/a")
	if err := os.MkdirAll(filepath.Join(repoA, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	repoB := gittest.Repo(t, filepath.Join(base, "b"), "other")
	clone := gittest.Repo(t, filepath.Join(base, "clone"), "acme")  // a second clone of acme, with a world
	stray := gittest.Repo(t, filepath.Join(base, "stray"), "acme")  // a third, with none (found through git)
	bare := gittest.Repo(t, filepath.Join(base, "bare-b"), "other") // no world records its main worktree
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}

	reg, err := registry.Open(ctx, filepath.Join(t.TempDir(), registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	hotfix := names.Worktree("Hotfix/X")
	for _, w := range []registry.Worktree{
		{Project: "acme", Name: "main", Branch: "main", Path: repoA, Repo: repoA},
		{Project: "acme", Name: "feat-a", Branch: "feat/a", Path: wtA, Repo: repoA},
		{Project: "acme", Name: "feat-b", Branch: "x/y", Path: filepath.Join(base, "a.wt", "feat-b"), Repo: repoA},
		{Project: "acme", Name: "b-holder", Branch: "feat-b", Path: filepath.Join(base, "a.wt", "b-holder"), Repo: repoA}, // sorts before feat-b
		{Project: "acme", Name: hotfix, Branch: "hotfix/x", Path: filepath.Join(base, "a.wt", hotfix), Repo: repoA},
		{Project: "acme", Name: "clone-w", Branch: "clone-w", Path: filepath.Join(base, "clone.wt", "clone-w"), Repo: clone},
		{Project: "other", Name: "main", Branch: "main", Path: repoB, Repo: repoB},
		{Project: "other", Name: "feat-a", Branch: "feat/a", Path: filepath.Join(base, "b.wt", "feat-a"), Repo: repoB},
		{Project: "other", Name: "only-other", Branch: "only-other", Path: filepath.Join(base, "b.wt", "only-other"), Repo: repoB},
	} {
		w.State = state.WorldUp
		if _, err := reg.UpsertWorktree(ctx, &w); err != nil {
			t.Fatal(err)
		}
	}

	inA := filepath.Join(repoA, "sub")
	tests := []struct {
		name string
		ref  api.WorldRef
		want string // project/worktree
		code string // else the error's code and message
		msg  string
	}{
		{name: "worktree name in the caller's project", ref: api.WorldRef{Name: "feat-a", Dir: inA}, want: "acme/feat-a"},
		{name: "branch in the caller's project", ref: api.WorldRef{Name: "feat/a", Dir: repoB}, want: "other/feat-a"},
		{name: "from the worktree itself", ref: api.WorldRef{Name: "feat-a", Dir: wtA}, want: "acme/feat-a"},
		{name: "project given", ref: api.WorldRef{Name: "feat-a", Dir: outside, Project: "other"}, want: "other/feat-a"},
		{name: "one project's name from outside", ref: api.WorldRef{Name: "only-other", Dir: outside}, want: "other/only-other"},
		{name: "folded branch", ref: api.WorldRef{Name: "Hotfix/X", Dir: inA}, want: "acme/" + hotfix},
		{name: "exact worktree name wins over a branch", ref: api.WorldRef{Name: "feat-b", Dir: inA}, want: "acme/feat-b"},
		{name: "no name: the world here", ref: api.WorldRef{Dir: wtA}, want: "acme/feat-a"},
		{name: "no name in a subdirectory", ref: api.WorldRef{Dir: inA}, want: "acme/main"},

		{name: "several projects from outside", ref: api.WorldRef{Name: "feat-a", Dir: outside}, code: api.CodeInvalid,
			msg: `"feat-a" names worlds in several projects (acme/feat-a, other/feat-a): run the command inside the project's repository, or pass --project`},
		{name: "another project's world", ref: api.WorldRef{Name: "only-other", Dir: inA}, code: api.CodeNotFound,
			msg: `project "acme" (the repository you are in) has no world named "only-other" (other projects have other/only-other; pass --project to act on one of them)`},
		{name: "unknown in the caller's project", ref: api.WorldRef{Name: "nope", Dir: inA}, code: api.CodeNotFound,
			msg: `project "acme" (the repository you are in) has no world named "nope" (binky status lists every world; binky up nope creates it)`},
		{name: "unknown in a project given", ref: api.WorldRef{Name: "nope", Dir: outside, Project: "acme"}, code: api.CodeNotFound,
			msg: `project "acme" has no world named "nope" (binky status lists every world; binky up nope creates it)`},
		{name: "unknown from outside", ref: api.WorldRef{Name: "nope", Dir: outside}, code: api.CodeNotFound,
			msg: `no world named "nope" (binky status lists them; binky up nope in a repository creates it)`},
		{name: "a second clone's world", ref: api.WorldRef{Name: "clone-w", Dir: inA}, code: api.CodeConflict,
			msg: `world clone-w of project "acme" belongs to the repository at ` + clone + `, not to ` + repoA + `, which claims the same project name; run the command in ` + clone + `, or give this repository its own [project] name`},
		{name: "from a clone with no world (asks git)", ref: api.WorldRef{Name: "feat-a", Dir: stray}, code: api.CodeConflict,
			msg: `world feat-a of project "acme" belongs to the repository at ` + repoA + `, not to ` + stray + `, which claims the same project name; run the command in ` + repoA + `, or give this repository its own [project] name`},
		{name: "no name, no dir", ref: api.WorldRef{}, code: api.CodeInvalid,
			msg: "which worktree? give its name or branch (binky status lists them)"},
		{name: "no name in a worktree with no world", ref: api.WorldRef{Dir: bare}, code: api.CodeNotFound,
			msg: "the worktree at " + bare + " has no world yet (binky up brings it up; binky status lists the worlds)"},
		{name: "no name, the world here of another project", ref: api.WorldRef{Dir: inA, Project: "other"}, code: api.CodeNotFound,
			msg: "the worktree at " + repoA + " has no world yet (binky up brings it up; binky status lists the worlds)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := Find(ctx, reg, tt.ref)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Find(%+v): %v; want %s", tt.ref, err, tt.want)
				}
				if got := rec.Project + "/" + rec.Name; got != tt.want {
					t.Errorf("Find(%+v) = %s; want %s", tt.ref, got, tt.want)
				}
				return
			}
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Code != tt.code || ae.Message != tt.msg {
				t.Errorf("Find(%+v): %v (%T); want the %s error %q", tt.ref, err, err, tt.code, tt.msg)
			}
		})
	}

	// A directory in no repository, with no name: refused, with git's
	// reason kept as the cause.
	_, err = Find(ctx, reg, api.WorldRef{Dir: outside})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeInvalid || !strings.HasPrefix(ae.Message, "which worktree? "+outside+" is not inside a worktree of a git repository, so give the worktree's name or branch (binky status lists them): ") || ae.Unwrap() == nil {
		t.Errorf("Find outside any repository: %v; want the invalid error naming %s, with git's error as its cause", err, outside)
	}
}
