package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/worktree"
)

// ErrOutsideProject is wrapped by a hook's refusal of a path that is not
// its project's (a *RefusedError), and by `hook install`'s refusal of a
// config directory that is a symlink out of the project.
var ErrOutsideProject = errors.New("outside the hook's project")

// RefusedError is a path a hook refused to act on, and why. Nothing was
// changed: it is returned before any git command that writes and before
// any call to the daemon.
type RefusedError struct {
	// Path is the path as the hook was given it.
	Path string
	// Reason says what the path is instead ("it is a worktree of another
	// repository (…)").
	Reason string
	// Project is the top of the worktree the hook runs for.
	Project string
}

// Error is "refused <path>: <reason>; binky's hooks act only inside the
// repository they run for (<project>), so nothing was changed".
func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused %s: %s; binky's hooks act only inside the repository they run for (%s), so nothing was changed", e.Path, e.Reason, e.Project)
}

func (e *RefusedError) Unwrap() error { return ErrOutsideProject }

// ClaudeWorktrees is where, under the project's top, a WorktreeCreate
// hook adds worktrees (where Claude Code itself puts them).
const ClaudeWorktrees = ".claude/worktrees"

// Project is the repository a hook runs for: the one its working
// directory (or CLAUDE_PROJECT_DIR) is in. A hook acts only on worktrees
// of it (Worktree, RemovableWorktree) and adds worktrees only in its
// ClaudeWorktrees directory (NewWorktree).
type Project struct {
	// Top is the top of the worktree the hook runs in, as git names it.
	Top string
	// Root is the main worktree ("" for a bare repository).
	Root string
	// CommonDir is the git directory every worktree of the repository
	// shares, symlinks resolved.
	CommonDir string
	repo      *worktree.Repo
	realTop   string
}

// OpenProject finds the repository dir is in. dir must be inside one of
// its worktrees (not in a .git directory, not in a bare repository).
func OpenProject(ctx context.Context, dir string) (*Project, error) {
	repo, err := worktree.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: %w", dir, err)
	}
	if repo.Dir == "" {
		return nil, fmt.Errorf("%s is not inside a worktree of the repository %s (a hook runs in a worktree)", dir, repo.CommonDir)
	}
	p := &Project{Top: repo.Dir, repo: repo}
	if !repo.Bare {
		p.Root = repo.Root
	}
	if p.CommonDir, err = filepath.EvalSymlinks(repo.CommonDir); err != nil {
		return nil, fmt.Errorf("resolve the git directory %s: %w", repo.CommonDir, err)
	}
	if p.realTop, err = filepath.EvalSymlinks(repo.Dir); err != nil {
		return nil, fmt.Errorf("resolve the worktree %s: %w", repo.Dir, err)
	}
	return p, nil
}

func (p *Project) refuse(path, format string, args ...any) *RefusedError {
	return &RefusedError{Path: path, Reason: fmt.Sprintf(format, args...), Project: p.Top}
}

// Worktree checks that path is a worktree of p's repository, or a
// directory inside one, and returns that worktree's top (symlinks
// resolved). Anything else is a *RefusedError: a path that does not exist
// or is no directory, one inside a .git directory (any component named
// .git, or git says so), one in no repository or in another repository
// (its git common directory is not p's), and a worktree git does not list
// for p's repository. It runs only read-only git commands (rev-parse,
// worktree list) and writes nothing.
func (p *Project) Worktree(ctx context.Context, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", p.refuse(path, "it cannot be made absolute (%v)", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", p.refuse(path, "it does not exist")
	}
	if err != nil {
		return "", p.refuse(path, "it cannot be resolved (%v)", err)
	}
	if inGitDir(real) {
		if real != abs {
			return "", p.refuse(path, "it resolves to %s, inside a .git directory", real)
		}
		return "", p.refuse(path, "it is inside a .git directory")
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", p.refuse(path, "it is not a directory")
	}
	g, err := probe(ctx, real)
	if err != nil {
		return "", p.refuse(path, "it is not in a git repository (%v)", err)
	}
	if g.gitDir {
		return "", p.refuse(path, "it is inside the git directory %s", g.commonDir)
	}
	if !samePath(g.commonDir, p.CommonDir) {
		return "", p.refuse(path, "it belongs to another repository (git directory %s, not %s)", g.commonDir, p.CommonDir)
	}
	if !g.workTree {
		return "", p.refuse(path, "it is not inside a worktree")
	}
	wts, err := p.repo.List(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range wts {
		if !w.Bare && samePath(w.Path, g.top) {
			return g.top, nil
		}
	}
	return "", p.refuse(path, "git does not list %s among the repository's worktrees", g.top)
}

// RemovableWorktree is Worktree for a hook that removes the worktree:
// path must be a worktree's top (not a directory inside one) and not the
// main worktree. It returns the worktree's top.
func (p *Project) RemovableWorktree(ctx context.Context, path string) (string, error) {
	top, err := p.Worktree(ctx, path)
	if err != nil {
		return "", err
	}
	abs, _ := filepath.Abs(path)
	real, _ := filepath.EvalSymlinks(abs)
	if !samePath(real, top) {
		return "", p.refuse(path, "it is inside the worktree %s, not its top", top)
	}
	if p.Root != "" && samePath(top, p.Root) {
		return "", p.refuse(path, "it is the repository's main worktree, which a hook never removes")
	}
	return top, nil
}

// NewWorktree checks that path is where a hook may add a worktree:
// <top>/.claude/worktrees/<name>, with name one plain directory name.
// Symlinks are followed as far as the path exists, and what they lead to
// must be the same place inside the worktree the hook runs in: not a
// .git directory, not another repository (a nested checkout), not
// outside. A path that exists already must be an empty directory there,
// or a worktree of p's repository (a hook run twice reuses it). Anything
// else is a *RefusedError. It writes nothing.
func (p *Project) NewWorktree(ctx context.Context, path string) error {
	area := filepath.Join(p.Top, filepath.FromSlash(ClaudeWorktrees))
	if !filepath.IsAbs(path) {
		return p.refuse(path, "it is not an absolute path")
	}
	clean := filepath.Clean(path)
	if inGitDir(clean) {
		return p.refuse(path, "it is inside a .git directory")
	}
	if err := checkName(filepath.Base(clean)); err != nil {
		return p.refuse(path, "a hook adds a worktree only as %s%c<name>", area, filepath.Separator)
	}
	realArea, _, err := resolveExisting(area)
	if err != nil {
		return p.refuse(path, "%v", err)
	}
	if rel, err := filepath.Rel(p.realTop, realArea); err != nil || !within(p.realTop, realArea) || inGitDir(rel) {
		return p.refuse(path, "%s resolves to %s, outside the worktree %s or inside its .git", area, realArea, p.Top)
	}
	real, existing, err := resolveExisting(clean)
	if err != nil {
		return p.refuse(path, "%v", err)
	}
	if !pathEqual(filepath.Dir(real), realArea) {
		if real != clean {
			return p.refuse(path, "it resolves to %s, outside %s", real, area)
		}
		return p.refuse(path, "a hook adds a worktree only as %s%c<name>", area, filepath.Separator)
	}
	if existing == real {
		if _, err := p.RemovableWorktree(ctx, clean); err == nil {
			return nil
		}
		if ents, err := os.ReadDir(real); err != nil || len(ents) > 0 {
			return p.refuse(path, "it exists and is not a worktree of this repository")
		}
	}
	g, err := probe(ctx, existing)
	if err != nil {
		return p.refuse(path, "%s is not in a git repository (%v)", existing, err)
	}
	switch {
	case g.gitDir:
		return p.refuse(path, "%s is inside the git directory %s", existing, g.commonDir)
	case !samePath(g.commonDir, p.CommonDir):
		return p.refuse(path, "%s belongs to another repository (git directory %s, not %s)", existing, g.commonDir, p.CommonDir)
	case !g.workTree || !samePath(g.top, p.realTop):
		return p.refuse(path, "%s is not in the worktree %s", existing, p.Top)
	}
	return nil
}

// resolveExisting resolves the symlinks of path as far as it exists: it
// returns the path with its longest existing prefix resolved (real) and
// that resolved prefix (existing). The part after it does not exist, so
// has no symlink in it. A dangling symlink on the way is an error: what
// makes the directory would follow it somewhere else.
func resolveExisting(path string) (real, existing string, err error) {
	tail := ""
	cur := path
	for {
		if _, err := os.Lstat(cur); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", "", fmt.Errorf("no part of %s exists", path)
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
	r, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return "", "", fmt.Errorf("%s cannot be resolved (a dangling symlink?): %v", cur, err)
	}
	return filepath.Join(r, tail), r, nil
}

// inGitDir reports whether any component of path is named .git.
func inGitDir(path string) bool {
	for _, c := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it (both cleaned, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// gitFacts is what git says about a directory.
type gitFacts struct {
	commonDir string // resolved
	gitDir    bool   // inside a git directory
	workTree  bool   // inside a worktree
	top       string // the worktree's top, resolved ("" outside one)
}

// probe asks git about dir with read-only commands, in an environment
// that cannot point it at another repository.
func probe(ctx context.Context, dir string) (gitFacts, error) {
	var g gitFacts
	out, err := gitOut(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir", "--is-inside-git-dir", "--is-inside-work-tree")
	if err != nil {
		return g, err
	}
	ls := strings.Fields(out)
	if len(ls) != 3 {
		return g, fmt.Errorf("git rev-parse printed %q", out)
	}
	if g.commonDir, err = filepath.EvalSymlinks(filepath.FromSlash(ls[0])); err != nil {
		return g, err
	}
	g.gitDir, g.workTree = ls[1] == "true", ls[2] == "true"
	if g.workTree && !g.gitDir {
		top, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel")
		if err != nil {
			return g, err
		}
		if g.top, err = filepath.EvalSymlinks(filepath.FromSlash(strings.TrimSpace(top))); err != nil {
			return g, err
		}
	}
	return g, nil
}

// gitOut runs git in dir and returns its stdout; git's error is trimmed
// to its first line.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = worktree.GitEnv()
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		if msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimPrefix(msg, "fatal: "))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return out.String(), nil
}

// pathEqual compares cleaned paths, ignoring case on Windows.
func pathEqual(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if filepath.Separator == '\\' {
		return strings.EqualFold(a, b)
	}
	return a == b
}
