package hooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/internal/wine"
)

// gitT runs git in dir for a test, with no user or system config. Without
// git the test skips (under Wine, which has no git.exe, saying so), except
// under CI=true on a real system, where it fails.
func gitT(t testing.TB, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		wine.Skip(t, "git.exe is not there (docs/windows.md)")
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH; install git")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// newRepo makes a git repository at dir with one commit.
func newRepo(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// symlink makes a symlink or skips the test where the system has none
// for this user (Windows without developer mode).
func symlink(t testing.TB, target, link string) {
	t.Helper()
	wine.Skip(t, "os.Symlink succeeds but makes no reparse point that the file APIs follow or read back (readlink: winapi error #4390)")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks are not available here: %v", err)
	}
}

// confineFixture is a project and what lies around it:
//
//	proj/                      the project (main worktree)
//	proj/.claude/worktrees/a   a linked worktree of proj
//	proj/.claude/worktrees/esc symlink -> other-wt
//	proj/.claude/worktrees/junk a non-empty plain directory
//	proj/vendor/nested         another repository inside proj
//	proj.side                  a linked worktree of proj, beside it
//	link-to-a                  symlink -> proj/.claude/worktrees/a
//	other/, other-wt           another repository and its linked worktree
//	                           (with an uncommitted file)
//	plain/                     no repository
type confineFixture struct {
	base, proj, a, side, other, otherWT, plain string
	p                                          *Project
}

func newConfineFixture(t testing.TB) *confineFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &confineFixture{
		base:    base,
		proj:    filepath.Join(base, "proj"),
		side:    filepath.Join(base, "proj.side"),
		other:   filepath.Join(base, "other"),
		otherWT: filepath.Join(base, "other-wt"),
		plain:   filepath.Join(base, "plain"),
	}
	f.a = filepath.Join(f.proj, ".claude", "worktrees", "a")
	newRepo(t, f.proj)
	gitT(t, f.proj, "worktree", "add", "-q", "-b", "wt-a", f.a)
	gitT(t, f.proj, "worktree", "add", "-q", "-b", "side", f.side)
	newRepo(t, f.other)
	gitT(t, f.other, "worktree", "add", "-q", "-b", "o", f.otherWT)
	os.WriteFile(filepath.Join(f.otherWT, "uncommitted.txt"), []byte("work\n"), 0o644)
	newRepo(t, filepath.Join(f.proj, "vendor", "nested"))
	os.MkdirAll(filepath.Join(f.proj, ".claude", "worktrees", "junk"), 0o755)
	os.WriteFile(filepath.Join(f.proj, ".claude", "worktrees", "junk", "f"), nil, 0o644)
	os.MkdirAll(filepath.Join(f.proj, ".claude", "worktrees", "empty"), 0o755)
	os.MkdirAll(f.plain, 0o755)
	symlink(t, f.otherWT, filepath.Join(f.proj, ".claude", "worktrees", "esc"))
	symlink(t, f.a, filepath.Join(base, "link-to-a"))
	if f.p, err = OpenProject(context.Background(), f.proj); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWorktreeConfined: the paths `hook up|down` and `hook claude remove`
// accept are worktrees of the hook's own repository, nothing else.
func TestWorktreeConfined(t *testing.T) {
	f := newConfineFixture(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name, path string
		top        string // the worktree accepted; "" when refused
		removable  bool
		why        string // in the refusal
	}{
		{name: "linked worktree", path: f.a, top: f.a, removable: true},
		{name: "sibling worktree", path: f.side, top: f.side, removable: true},
		{name: "main worktree", path: f.proj, top: f.proj, why: "main worktree"},
		{name: "inside a worktree", path: filepath.Join(f.proj, ".claude"), top: f.proj, why: "not its top"},
		{name: "symlink to own worktree", path: filepath.Join(f.base, "link-to-a"), top: f.a, removable: true},
		{name: "dot-dot escape", path: f.a + "/../../../../other-wt", why: "another repository"},
		{name: "dot-dot to other repo", path: f.proj + "/../other", why: "another repository"},
		{name: "symlink escaping", path: filepath.Join(f.proj, ".claude", "worktrees", "esc"), why: "another repository"},
		{name: "other repo's worktree", path: f.otherWT, why: "another repository"},
		{name: "other repo's main worktree", path: f.other, why: "another repository"},
		{name: "other repo's .git", path: filepath.Join(f.other, ".git"), why: "inside a .git directory"},
		{name: "inside other repo's .git", path: filepath.Join(f.other, ".git", "refs"), why: "inside a .git directory"},
		{name: "own .git", path: filepath.Join(f.proj, ".git"), why: "inside a .git directory"},
		{name: "nested repository", path: filepath.Join(f.proj, "vendor", "nested"), why: "another repository"},
		{name: "no repository", path: f.plain, why: "not in a git repository"},
		{name: "missing", path: filepath.Join(f.base, "gone"), why: "does not exist"},
		{name: "a file", path: filepath.Join(f.proj, "README"), why: "not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top, err := f.p.Worktree(ctx, tt.path)
			if tt.top != "" {
				if err != nil || top != tt.top {
					t.Fatalf("Worktree(%s) = %q, %v; want %s", tt.path, top, err, tt.top)
				}
			} else {
				checkRefused(t, "Worktree", tt.path, err, tt.why)
			}
			top, err = f.p.RemovableWorktree(ctx, tt.path)
			if tt.removable {
				if err != nil || top != tt.top {
					t.Fatalf("RemovableWorktree(%s) = %q, %v; want %s", tt.path, top, err, tt.top)
				}
				return
			}
			checkRefused(t, "RemovableWorktree", tt.path, err, tt.why)
		})
	}
}

// checkRefused fails unless err is a *RefusedError for path saying why.
func checkRefused(t *testing.T, fn, path string, err error, why string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrOutsideProject) {
		t.Fatalf("%s(%s) error %v; want a *RefusedError", fn, path, err)
	}
	msg := err.Error()
	for _, want := range []string{"refused " + path + ": ", why, "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s(%s) error %q; want it to say %q", fn, path, msg, want)
		}
	}
}

// TestNewWorktreeConfined: a WorktreeCreate hook adds worktrees only as
// <top>/.claude/worktrees/<name>, resolved.
func TestNewWorktreeConfined(t *testing.T) {
	f := newConfineFixture(t)
	ctx := context.Background()
	area := filepath.Join(f.proj, ".claude", "worktrees")
	for _, tt := range []struct {
		name, path, why string // why is "" when accepted
	}{
		{name: "new", path: filepath.Join(area, "new")},
		{name: "existing worktree (hook run twice)", path: f.a},
		{name: "existing empty directory", path: filepath.Join(area, "empty")},
		{name: "existing other directory", path: filepath.Join(area, "junk"), why: "exists and is not a worktree"},
		{name: "dot-dot escape", path: area + "/../../../other/x", why: "only as " + area},
		{name: "dot-dot name", path: area + "/..", why: "only as " + area},
		{name: "deeper", path: filepath.Join(area, "a", "b"), why: "only as " + area},
		{name: "beside the project", path: filepath.Join(f.base, "x"), why: "only as " + area},
		{name: "in the project top", path: filepath.Join(f.proj, "x"), why: "only as " + area},
		{name: "other repo's checkout", path: filepath.Join(f.other, ".claude", "worktrees", "x"), why: "only as " + area},
		{name: "other repo's .git", path: filepath.Join(f.other, ".git", "x"), why: "inside a .git directory"},
		{name: "own .git", path: filepath.Join(f.proj, ".git", "worktrees", "x"), why: "inside a .git directory"},
		{name: "named .git", path: filepath.Join(area, ".git"), why: "inside a .git directory"},
		{name: "symlink escaping", path: filepath.Join(area, "esc"), why: "resolves to " + f.otherWT + ", outside " + area},
		{name: "under an escaping symlink", path: filepath.Join(area, "esc", "x"), why: "resolves to " + filepath.Join(f.otherWT, "x")},
		{name: "option-like name", path: filepath.Join(area, "-rf"), why: "only as " + area},
		{name: "relative", path: "x", why: "not an absolute path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := f.p.NewWorktree(ctx, tt.path)
			if tt.why == "" {
				if err != nil {
					t.Fatalf("NewWorktree(%s): %v; want it accepted", tt.path, err)
				}
				return
			}
			checkRefused(t, "NewWorktree", tt.path, err, tt.why)
		})
	}
}

// TestNewWorktreeAreaConfined: the worktree area itself must resolve
// inside the project's worktree, outside its .git, in its repository.
func TestNewWorktreeAreaConfined(t *testing.T) {
	f := newConfineFixture(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, proj string)
		why   string
	}{
		{name: ".claude to another repository", setup: func(t *testing.T, proj string) { symlink(t, f.other, filepath.Join(proj, ".claude")) }, why: "outside the worktree"},
		{name: ".claude dangling", setup: func(t *testing.T, proj string) {
			symlink(t, filepath.Join(f.base, "nowhere"), filepath.Join(proj, ".claude"))
		}, why: "cannot be resolved"},
		{name: ".claude into .git", setup: func(t *testing.T, proj string) { symlink(t, ".git", filepath.Join(proj, ".claude")) }, why: "inside its .git"},
		{name: ".claude a nested repository", setup: func(t *testing.T, proj string) { newRepo(t, filepath.Join(proj, ".claude")) }, why: "belongs to another repository"},
		{name: ".claude inside the project", setup: func(t *testing.T, proj string) {
			os.MkdirAll(filepath.Join(proj, "conf"), 0o755)
			symlink(t, "conf", filepath.Join(proj, ".claude"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proj := newRepo(t, filepath.Join(t.TempDir(), "p"))
			tt.setup(t, proj)
			p, err := OpenProject(ctx, proj)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(p.Top, ".claude", "worktrees", "x")
			err = p.NewWorktree(ctx, path)
			if tt.why == "" {
				if err != nil {
					t.Fatalf("NewWorktree(%s): %v; want it accepted", path, err)
				}
				return
			}
			checkRefused(t, "NewWorktree", path, err, tt.why)
		})
	}
}

// TestAddRemoveTouchNothingOutside: a refused path runs no git command
// that writes: another repository keeps its worktree, its uncommitted
// file and its git directory as they were.
func TestAddRemoveTouchNothingOutside(t *testing.T) {
	f := newConfineFixture(t)
	ctx := context.Background()
	if err := f.p.RemoveWorktree(ctx, f.otherWT); !errors.Is(err, ErrOutsideProject) {
		t.Fatalf("RemoveWorktree(other repo's worktree): %v; want refused", err)
	}
	if _, err := os.Stat(filepath.Join(f.otherWT, "uncommitted.txt")); err != nil {
		t.Fatalf("the other repository's worktree lost its uncommitted file: %v", err)
	}
	if err := f.p.RemoveWorktree(ctx, f.proj); !errors.Is(err, ErrOutsideProject) {
		t.Fatalf("RemoveWorktree(main worktree): %v; want refused", err)
	}
	for _, path := range []string{filepath.Join(f.other, ".git", "x"), filepath.Join(f.other, "x"), filepath.Join(f.proj, ".claude", "worktrees", "esc", "x")} {
		if _, err := f.p.AddWorktree(ctx, path, "worktree-x", ""); !errors.Is(err, ErrOutsideProject) {
			t.Errorf("AddWorktree(%s): %v; want refused", path, err)
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("AddWorktree(%s) made it (lstat: %v)", path, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.other, ".git", "binky-worktrees.lock")); !os.IsNotExist(err) {
		t.Errorf("a refused path left binky's lock in the other repository's .git (stat: %v)", err)
	}
	// Inside the project both work.
	x := filepath.Join(f.proj, ".claude", "worktrees", "x")
	if made, err := f.p.AddWorktree(ctx, x, "worktree-x", ""); err != nil || !made {
		t.Fatalf("AddWorktree(%s) = %v, %v; want made", x, made, err)
	}
	if made, err := f.p.AddWorktree(ctx, x, "worktree-x", ""); err != nil || made {
		t.Fatalf("AddWorktree(%s) again = %v, %v; want reused", x, made, err)
	}
	if err := f.p.RemoveWorktree(ctx, x); err != nil {
		t.Fatalf("RemoveWorktree(%s): %v", x, err)
	}
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Errorf("RemoveWorktree left %s (stat: %v)", x, err)
	}
}

func TestOpenProjectOutsideWorktree(t *testing.T) {
	f := newConfineFixture(t)
	for _, dir := range []string{f.plain, filepath.Join(f.proj, ".git")} {
		if _, err := OpenProject(context.Background(), dir); err == nil {
			t.Errorf("OpenProject(%s) succeeded; want refused (no worktree there)", dir)
		}
	}
}

// FuzzConfinedCreate: whatever WorktreeCreate payload Claude Code (or
// anyone) sends, a path NewWorktree accepts is a direct child of the
// project's .claude/worktrees, resolved, outside any .git.
func FuzzConfinedCreate(f *testing.F) {
	fx := newConfineFixture(f)
	area := filepath.Join(fx.proj, ".claude", "worktrees")
	for _, p := range []string{
		`{"name":"ok"}`,
		`{"name":"x","worktree_path":"` + area + `/x"}`,
		`{"name":"x","worktree_path":"` + area + `/../../../other/x"}`,
		`{"name":"x","worktree_path":"` + fx.other + `/.git/x"}`,
		`{"name":"x","base_path":"` + fx.otherWT + `"}`,
		`{"name":"x","worktree_path":"` + area + `/esc/x"}`,
		`{"name":"esc"}`,
		`{"name":".git"}`,
		`{"worktree_path":"` + area + `/a"}`,
	} {
		f.Add([]byte(p))
	}
	ctx := context.Background()
	realArea, err := filepath.EvalSymlinks(area)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseClaudeCreate(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		path := c.Path(fx.p.Top)
		if fx.p.NewWorktree(ctx, path) != nil {
			return
		}
		real, _, err := resolveExisting(filepath.Clean(path))
		if err != nil {
			t.Fatalf("accepted %s, which does not resolve: %v", path, err)
		}
		if filepath.Dir(real) != realArea || inGitDir(real) || !within(fx.base, real) {
			t.Fatalf("accepted %s (resolved %s); want a direct child of %s outside .git", path, real, realArea)
		}
		if st, err := os.Lstat(real); err == nil && st.IsDir() && real != filepath.Join(realArea, "a") && real != filepath.Join(realArea, "empty") {
			t.Fatalf("accepted the existing %s, neither a worktree of the project nor empty", real)
		}
	})
}
