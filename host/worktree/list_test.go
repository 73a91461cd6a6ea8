package worktree

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	out := "worktree /src/app\x00HEAD 1111111111111111111111111111111111111111\x00branch refs/heads/main\x00\x00" +
		"worktree /src/app.worktrees/feat-a-d54ad7\x00HEAD 2222222222222222222222222222222222222222\x00branch refs/heads/feat/a\x00locked reason\nwith newline\x00\x00" +
		"worktree /src/odd path\nname\x00HEAD 3333333333333333333333333333333333333333\x00detached\x00prunable gitdir file points to non-existent location\x00\x00" +
		"worktree /src/new\x00HEAD 0000000000000000000000000000000000000000\x00branch refs/heads/unborn\x00future-attribute x\x00\x00"
	want := []Worktree{
		{Path: filepath.FromSlash("/src/app"), Branch: "main", Head: strings.Repeat("1", 40)},
		{Path: filepath.FromSlash("/src/app.worktrees/feat-a-d54ad7"), Branch: "feat/a", Head: strings.Repeat("2", 40), Locked: true},
		{Path: filepath.FromSlash("/src/odd path\nname"), Head: strings.Repeat("3", 40), Detached: true, Prunable: true},
		{Path: filepath.FromSlash("/src/new"), Branch: "unborn"},
	}
	if got := parseList(out); !slices.Equal(got, want) {
		t.Errorf("parseList = %+v; want %+v", got, want)
	}
	bare := "worktree /srv/repo.git\x00bare\x00\x00"
	if got := parseList(bare); len(got) != 1 || !got[0].Bare || got[0].Branch != "" {
		t.Errorf("parseList(bare) = %+v; want one bare entry", got)
	}
}

// render writes worktrees back as `git worktree list --porcelain -z`.
func render(wts []Worktree) string {
	var b strings.Builder
	for _, w := range wts {
		b.WriteString("worktree " + filepath.ToSlash(w.Path) + "\x00")
		if w.Bare {
			b.WriteString("bare\x00")
		}
		if w.Head != "" {
			b.WriteString("HEAD " + w.Head + "\x00")
		}
		if w.Branch != "" {
			b.WriteString("branch refs/heads/" + w.Branch + "\x00")
		}
		for _, a := range []struct {
			on   bool
			name string
		}{{w.Detached, "detached"}, {w.Locked, "locked"}, {w.Prunable, "prunable"}} {
			if a.on {
				b.WriteString(a.name + "\x00")
			}
		}
		b.WriteString("\x00")
	}
	return b.String()
}

func FuzzParseList(f *testing.F) {
	f.Fuzz(func(t *testing.T, out string) {
		wts := parseList(out)
		if n := strings.Count("\x00"+out, "\x00worktree "); len(wts) > n {
			t.Fatalf("parseList found %d worktrees in %d records", len(wts), n)
		}
		for _, w := range wts {
			if w.Path == "" {
				t.Fatalf("parseList(%q) gave an empty path: %+v", out, w)
			}
		}
		if again := parseList(render(wts)); !slices.Equal(again, wts) {
			t.Fatalf("parse(render(parse(%q))) = %+v; want %+v", out, again, wts)
		}
	})
}

func TestOneLine(t *testing.T) {
	tests := []struct{ stderr, want string }{
		{"fatal: not a git repository (or any of the parent directories): .git\n", "not a git repository (or any of the parent directories): .git"},
		{"fatal: cannot remove a locked working tree;\nuse 'remove -f -f' to override or unlock first\n", "cannot remove a locked working tree; use 'remove -f -f' to override or unlock first"},
		{"hint: do this\nhint: and that\nerror: pathspec 'x' did not match\n", "pathspec 'x' did not match"},
		{"Preparing worktree\nsomething odd\n", "something odd"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := oneLine(tt.stderr); got != tt.want {
			t.Errorf("oneLine(%q) = %q; want %q", tt.stderr, got, tt.want)
		}
	}
}
