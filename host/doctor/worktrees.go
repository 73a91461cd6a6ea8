package doctor

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/worktree"
)

// checkWorktrees compares the registry with the disk: a world whose
// directory is gone, and a directory git lists under one of a
// repository's worktree dirs (the default, or a worktree_dir) that no world
// is registered for.
func checkWorktrees(ctx context.Context, e *Env) []Finding {
	ws, err := worlds(e)
	if err != nil {
		return []Finding{skip("the registry cannot be read: %v", err)}
	}
	if len(ws) == 0 {
		return []Finding{ok("no registered worlds")}
	}
	var out []Finding
	registered := map[string]bool{}
	repos := map[string]bool{}
	for _, w := range ws {
		if w.Path == "" {
			continue
		}
		registered[filepath.Clean(w.Path)] = true
		if w.Repo != "" {
			repos[w.Repo] = true
		}
		if _, err := os.Stat(w.Path); os.IsNotExist(err) {
			out = append(out, warn("binky remove "+w.Project+"/"+w.Name,
				"world %s/%s is registered but its worktree %s is gone", w.Project, w.Name, w.Path))
		}
	}
	var repoList []string
	for r := range repos {
		repoList = append(repoList, r)
	}
	slices.Sort(repoList)
	for _, r := range repoList {
		repo, err := worktree.Open(ctx, r)
		if err != nil {
			continue // the repository itself is gone: the worlds above say so
		}
		list, err := repo.List(ctx)
		if err != nil {
			continue
		}
		dirs := worktreeDirs(ctx, repo, ws)
		for _, wt := range list {
			p := filepath.Clean(wt.Path)
			if wt.Bare || registered[p] || !dirs[filepath.Dir(p)] {
				continue
			}
			if wt.Prunable {
				out = append(out, warn("git -C "+r+" worktree prune", "git still lists worktree %s, whose directory is gone", p))
				continue
			}
			out = append(out, warn("cd "+p+" && binky up  (to give it a world), or git -C "+r+" worktree remove "+p,
				"worktree %s is on disk under binky's worktree dir but no world is registered for it", p))
		}
	}
	if len(out) == 0 {
		out = append(out, ok("%d registered world(s), each on disk", len(ws)))
	}
	return out
}

// worktreeDirs is every directory binky makes repo's worktrees in: the
// default one, and the worktree_dir (relative to the repository) of the
// repository's binky.toml and of each of its worlds' files.
func worktreeDirs(ctx context.Context, repo *worktree.Repo, ws []world) map[string]bool {
	dirs := map[string]bool{filepath.Clean(repo.DefaultDir()): true}
	add := func(cfg *config.Config) {
		d := cfg.Project.WorktreeDir
		if d == "" {
			return
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(repo.Root, d)
		}
		dirs[filepath.Clean(d)] = true
	}
	if cfg := loadQuiet(ctx, filepath.Join(repo.Root, config.FileName)); cfg != nil {
		add(cfg)
	}
	for _, w := range ws {
		if w.Repo != repo.Root && filepath.Clean(w.Repo) != filepath.Clean(repo.Root) {
			continue
		}
		if cfg := worldConfig(ctx, w); cfg != nil {
			add(cfg)
		}
	}
	return dirs
}
