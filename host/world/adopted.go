package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/worktree"
	"github.com/binkyhq/binky/sdk/names"
)

// Worktrees made by others (docs/agents.md): Claude Code's
// .claude/worktrees/<name>, worktrunk's sibling directories, a plain git
// worktree add, a detached HEAD. up brings such a worktree's world up in
// place (ensureWorktree reuses the worktree a branch is checked out in,
// wherever it is); remove takes the world and leaves the worktree to the
// tool that made it unless asked (api.RemoveArgs.RemoveWorktree).

// detachedWorldName is the name of the world of wt, a worktree on a
// detached HEAD, in project (a branch's is branchWorldName's). It has no
// branch to be named after: the world it was first brought up as keeps
// its name; a new one is named after the worktree's directory
// (worktreeName), with a short hash of its path when another worktree's
// world already holds that name.
func (e *Engine) detachedWorldName(ctx context.Context, project string, wt worktree.Worktree) string {
	name := worktreeName(wt)
	all, err := e.reg.Worktrees(ctx)
	if err != nil {
		return name
	}
	var holder *registry.Worktree
	for _, w := range all {
		if w.Project != project {
			continue
		}
		if SamePath(w.Path, wt.Path) && w.Branch == "" {
			return w.Name
		}
		if w.Name == name {
			holder = w
		}
	}
	if holder == nil || SamePath(holder.Path, wt.Path) {
		return name
	}
	if _, err := os.Stat(holder.Path); err != nil {
		return name // its worktree is gone: the name is free again
	}
	sum := sha256.Sum256([]byte(filepath.Clean(wt.Path)))
	return names.Worktree(name + "-" + hex.EncodeToString(sum[:3]))
}

// madeWorktree reports whether binky made the world's worktree: it marked
// it (worktree.MarkMade), or — a world an older binky brought up, before
// it marked what it made — the worktree sits where binky puts the
// branch's worktree. A worktree that is gone counts as made (there is
// nothing left to keep).
func (e *Engine) madeWorktree(rec *registry.Worktree) bool {
	made, known := worktree.Made(rec.Path)
	if made || !known {
		return true
	}
	if rec.Branch == "" || rec.Repo == "" {
		return false
	}
	dir := (&worktree.Repo{Root: rec.Repo}).DefaultDir()
	if cfg, err := e.worldConfig(rec); err == nil && cfg.Project.WorktreeDir != "" {
		dir = cfg.Project.WorktreeDir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(rec.Repo, dir)
		}
	}
	return SamePath(filepath.Join(dir, names.Worktree(rec.Branch)), rec.Path)
}
