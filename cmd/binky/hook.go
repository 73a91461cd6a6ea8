package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/hooks"
	"github.com/binkyhq/binky/host/worktree"
)

// hookCmd is what agent tools run: Claude Code's worktree hooks, the
// generic post-create/pre-remove pair, and the installers
// (docs/agents.md).
type hookCmd struct {
	Claude  hookClaudeCmd  `cmd:"" help:"Claude Code's WorktreeCreate and WorktreeRemove hooks (the JSON payload on stdin)."`
	Up      hookUpCmd      `cmd:"" help:"For a tool's post-create hook (worktrunk, Conductor, a script): bring up the world of the worktree at PATH (default: where you stand)."`
	Down    hookDownCmd    `cmd:"" help:"For a tool's pre-remove hook: remove the world of the worktree at PATH (processes, slices, ports, logs), leaving the worktree to the tool."`
	Install hookInstallCmd `cmd:"" help:"Write binky's hooks into a tool's project config (claude, worktrunk), keeping what is there."`
}

type hookClaudeCmd struct {
	Create hookClaudeCreateCmd `cmd:"" help:"WorktreeCreate: add the worktree Claude Code asks for, bring its world up, print only its path."`
	Remove hookClaudeRemoveCmd `cmd:"" help:"WorktreeRemove: remove the worktree's world and the worktree."`
}

type hookClaudeCreateCmd struct {
	Strict bool `help:"Fail the worktree's creation when its world does not come up (by default Claude Code gets the worktree, and binky status says why the world failed)."`
}

// Run speaks Claude Code's WorktreeCreate contract: the payload on stdin,
// the new worktree's absolute path as the only line on stdout, progress
// and errors on stderr, a non-zero exit when there is no worktree.
func (c *hookClaudeCreateCmd) Run(g *globals) error {
	p, err := hooks.ParseClaudeCreate(os.Stdin)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %w", err)}
	}
	base := os.Getenv("CLAUDE_PROJECT_DIR")
	if base == "" {
		base = p.Cwd
	}
	if base == "" {
		if base, err = os.Getwd(); err != nil {
			return err
		}
	}
	repo, err := worktree.Open(g.ctx, base)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %s is not in a git repository: %w", base, err)}
	}
	top := repo.Dir
	if top == "" {
		top = repo.Root
	}
	path := p.Path(top)
	if _, err := hooks.AddWorktree(g.ctx, top, path, p.Branch(), p.Base()); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %w", err)}
	}
	if err := hookUp(g, path); err != nil {
		if c.Strict {
			return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %w", err)}
		}
		fmt.Fprintf(os.Stderr, "binky: the worktree %s is made but its world did not come up (binky status says why; binky up in it tries again): %v\n", path, err)
	}
	fmt.Println(path)
	return nil
}

type hookClaudeRemoveCmd struct{}

// Run speaks WorktreeRemove: the world goes, then the worktree (the hook
// replaces Claude Code's own removal, after it asked the user about
// uncommitted changes).
func (c *hookClaudeRemoveCmd) Run(g *globals) error {
	p, err := hooks.ParseClaudeRemove(os.Stdin)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	if _, err := os.Stat(p.WorktreePath); err == nil {
		found, err := hookRemove(g, p.WorktreePath, api.RemoveArgs{Force: true, RemoveWorktree: true})
		if err != nil {
			return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
		}
		if found {
			return nil
		}
	}
	if err := hooks.RemoveWorktree(g.ctx, p.WorktreePath); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	return nil
}

type hookUpCmd struct {
	Path string `arg:"" optional:"" help:"The worktree (default: the directory you stand in)." type:"path"`
}

func (c *hookUpCmd) Run(g *globals) error {
	dir, err := hookDir(c.Path)
	if err != nil {
		return err
	}
	if err := hookUp(g, dir); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook up: %w", err)}
	}
	return nil
}

type hookDownCmd struct {
	Path string `arg:"" optional:"" help:"The worktree (default: the directory you stand in)." type:"path"`
}

func (c *hookDownCmd) Run(g *globals) error {
	dir, err := hookDir(c.Path)
	if err != nil {
		return err
	}
	found, err := hookRemove(g, dir, api.RemoveArgs{KeepWorktree: true})
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook down: %w", err)}
	}
	if !found {
		fmt.Fprintf(os.Stderr, "binky: the worktree at %s has no world; nothing to do\n", dir)
	}
	return nil
}

func hookDir(path string) (string, error) {
	if path != "" {
		return filepath.Abs(path)
	}
	return os.Getwd()
}

// hookUp brings up the world of the worktree at dir, progress on stderr.
func hookUp(g *globals, dir string) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	pp := newProgress(false)
	var w api.World
	err = cl.Call(g.ctx, api.OpUp, api.UpArgs{Dir: dir, Env: cli.CallerEnv()}, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "binky: %s/%s is up (%s)\n", w.Project, w.Worktree, portsLabel(w.Ports))
	return nil
}

// hookRemove removes the world of the worktree at dir; found is false
// when it has none.
func hookRemove(g *globals, dir string, a api.RemoveArgs) (found bool, err error) {
	cl, err := g.client()
	if err != nil {
		return false, err
	}
	a.WorldRef = api.WorldRef{Dir: dir, Env: cli.CallerEnv()}
	pp := newProgress(false)
	var w api.World
	err = cl.Call(g.ctx, api.OpRemove, a, api.Handlers{Progress: pp.show}, &w)
	pp.done()
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == api.CodeNotFound {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	fmt.Fprintf(os.Stderr, "binky: %s/%s removed\n", w.Project, w.Worktree)
	return true, nil
}

type hookInstallCmd struct {
	Claude    hookInstallClaudeCmd    `cmd:"" help:"Add binky's WorktreeCreate and WorktreeRemove hooks to .claude/settings.json (merged; another worktree hook there is refused)."`
	Worktrunk hookInstallWorktrunkCmd `cmd:"" help:"Add binky hook up (pre-start) and binky hook down (pre-remove) to worktrunk's .config/wt.toml (merged)."`
}

type hookInstallClaudeCmd struct {
	Dir string `help:"The project (default: the top of the worktree you stand in)." type:"path" placeholder:"DIR"`
}

func (c *hookInstallClaudeCmd) Run(g *globals) error {
	top, err := projectTop(g, c.Dir)
	if err != nil {
		return err
	}
	bin := binkyCommand()
	return installInto(filepath.Join(top, ".claude", "settings.json"), func(in []byte) ([]byte, bool, error) {
		return hooks.MergeClaudeSettings(in, bin+" hook claude create", bin+" hook claude remove")
	})
}

type hookInstallWorktrunkCmd struct {
	Dir string `help:"The project (default: the top of the worktree you stand in)." type:"path" placeholder:"DIR"`
}

func (c *hookInstallWorktrunkCmd) Run(g *globals) error {
	top, err := projectTop(g, c.Dir)
	if err != nil {
		return err
	}
	bin := binkyCommand()
	return installInto(filepath.Join(top, ".config", "wt.toml"), func(in []byte) ([]byte, bool, error) {
		return hooks.MergeWorktrunk(in, bin+" hook up", bin+" hook down")
	})
}

// projectTop is the top of the worktree dir (or the cwd) is in.
func projectTop(g *globals, dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	repo, err := worktree.Open(g.ctx, dir)
	if err != nil {
		return "", &exitError{Code: 1, Err: fmt.Errorf("hook install: %s is not in a git repository: %w", dir, err)}
	}
	if repo.Dir != "" {
		return repo.Dir, nil
	}
	return repo.Root, nil
}

// binkyCommand is how a hook calls binky: "binky" when the binky on PATH
// is this one, else this binary's absolute path.
func binkyCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "binky"
	}
	if onPath, err := exec.LookPath("binky"); err == nil {
		a, errA := filepath.EvalSymlinks(onPath)
		b, errB := filepath.EvalSymlinks(self)
		if errA == nil && errB == nil && a == b {
			return "binky"
		}
	}
	return self
}

// installInto merges binky's hooks into the file at path (made when
// missing) and says what it did.
func installInto(path string, merge func([]byte) ([]byte, bool, error)) error {
	in, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %w", err)}
	}
	out, changed, err := merge(in)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %s: %w", path, err)}
	}
	if !changed {
		fmt.Printf("%s already has binky's hooks; nothing changed\n", path)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %w", err)}
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp := path + ".binky-tmp"
	if err := os.WriteFile(tmp, out, mode); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %w", err)}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %w", err)}
	}
	fmt.Printf("wrote binky's hooks into %s\n", path)
	return nil
}
