package main

import (
	"errors"
	"fmt"
	"io/fs"
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
// and errors on stderr, a non-zero exit when there is no worktree. The
// worktree goes only to <project>/.claude/worktrees/<name>
// (hooks.Project.NewWorktree); any other path is refused.
func (c *hookClaudeCreateCmd) Run(g *globals) error {
	p, err := hooks.ParseClaudeCreate(os.Stdin)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %w", err)}
	}
	proj, err := claudeProject(g)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude create: %w", err)}
	}
	path := p.Path(proj.Top)
	if _, err := proj.AddWorktree(g.ctx, path, p.Branch(), p.Base()); err != nil {
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
// uncommitted changes). Only a linked worktree of the project's own
// repository is removed (hooks.Project.RemovableWorktree); any other
// path is refused before the daemon or git is asked to change anything.
func (c *hookClaudeRemoveCmd) Run(g *globals) error {
	p, err := hooks.ParseClaudeRemove(os.Stdin)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	proj, err := claudeProject(g)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	if _, err := os.Lstat(p.WorktreePath); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "binky: %s does not exist; nothing to remove\n", p.WorktreePath)
		return nil
	}
	top, err := proj.RemovableWorktree(g.ctx, p.WorktreePath)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	found, err := hookRemove(g, top, api.RemoveArgs{Force: true, RemoveWorktree: true})
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	if found {
		return nil
	}
	if err := proj.RemoveWorktree(g.ctx, top); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook claude remove: %w", err)}
	}
	return nil
}

// claudeProject is the repository a Claude Code hook runs for: the one
// CLAUDE_PROJECT_DIR (which Claude Code sets for every hook) is in, else
// the working directory's. The payload's own cwd never chooses it: it
// comes with the paths being checked.
func claudeProject(g *globals) (*hooks.Project, error) {
	dir := os.Getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	return hooks.OpenProject(g.ctx, dir)
}

type hookUpCmd struct {
	Path string `arg:"" optional:"" help:"The worktree, of the repository you stand in (default: the directory you stand in)." type:"path"`
}

func (c *hookUpCmd) Run(g *globals) error {
	dir, err := hookDir(g, c.Path)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook up: %w", err)}
	}
	if err := hookUp(g, dir); err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook up: %w", err)}
	}
	return nil
}

type hookDownCmd struct {
	Path string `arg:"" optional:"" help:"The worktree, of the repository you stand in (default: the directory you stand in)." type:"path"`
}

func (c *hookDownCmd) Run(g *globals) error {
	dir, err := hookDir(g, c.Path)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook down: %w", err)}
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

// hookDir is the top of the worktree a `hook up|down` acts on: path's,
// which must be a worktree of the repository the hook runs in (its
// working directory), or the working directory's own.
func hookDir(g *globals, path string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	proj, err := hooks.OpenProject(g.ctx, wd)
	if err != nil {
		return "", fmt.Errorf("the hook runs in %s, which is not a worktree of a git repository; run it in the repository whose worktree it names: %w", wd, err)
	}
	if path == "" {
		path = wd
	}
	return proj.Worktree(g.ctx, path)
}

// hookUp brings up the world of the worktree at dir, progress on stderr.
// With --host, the worktree's branch is pushed to the host and its world
// brought up there (hookremote.go).
func hookUp(g *globals, dir string) error {
	if g.host != "" {
		return hookUpRemote(g, dir)
	}
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
	if g.host != "" {
		return hookRemoveRemote(g, dir)
	}
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
	bin := binkyCommand() + hostArg(g)
	return installInto(top, ".claude/settings.json", func(in []byte) ([]byte, bool, error) {
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
	bin := binkyCommand() + hostArg(g)
	return installInto(top, ".config/wt.toml", func(in []byte) ([]byte, bool, error) {
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

// installInto merges binky's hooks into the config rel under the project
// top (made when missing; hooks.Install says what it trusts) and says what
// it did.
func installInto(top, rel string, merge func([]byte) ([]byte, bool, error)) error {
	path, changed, err := hooks.Install(top, rel, merge)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("hook install: %w", err)}
	}
	if !changed {
		fmt.Printf("%s already has binky's hooks; nothing changed\n", path)
		return nil
	}
	fmt.Printf("wrote binky's hooks into %s\n", path)
	return nil
}
