package main

import (
	"fmt"
	"os"

	"github.com/binkyhq/binky/host/remote"
)

// The hooks with --host (docs/remote.md): the agent tool's worktree is
// here; its world runs on the host. hook up pushes the worktree's branch
// to the host's clone (as binky --host up does) and brings it up there;
// hook down and hook claude remove remove that world on the host (the
// local worktree is the tool's, or Claude Code's hook removes it here).

func hookUpRemote(g *globals, dir string) error {
	r, err := openRemote(g.home, g.host)
	if err != nil {
		return err
	}
	repo, args, err := pushToHost(g.ctx, r, dir, []string{"up", "-q"})
	if err != nil {
		return err
	}
	// The hook's stdout is the tool's (Claude Code reads the path from
	// it): the host's output goes to stderr.
	code, err := r.Exec(g.ctx, repo, nil, os.Stderr, os.Stderr, args...)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("up on host %s exited %d", g.host, code)
	}
	// Its names and ports answer here too (reach.go).
	reachAfter(g.ctx, g.home, g.host)
	return nil
}

// hookRemoveRemote removes the world of dir's branch on the host. found
// is false so that a Claude Code remove still removes the local worktree.
func hookRemoveRemote(g *globals, dir string) (bool, error) {
	r, err := openRemote(g.home, g.host)
	if err != nil {
		return false, err
	}
	branch, err := gitOut(g.ctx, dir, "symbolic-ref", "--short", "HEAD")
	if err != nil {
		return false, fmt.Errorf("the worktree %s has no branch checked out: %w", dir, err)
	}
	f, err := remote.Load(g.home)
	if err != nil {
		return false, err
	}
	top, err := gitOut(g.ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false, err
	}
	repo := f.Hosts[g.host].Repos[projectName(top)]
	if repo == "" {
		return false, fmt.Errorf("host %s has no clone of %s recorded in hosts.toml: nothing of it runs there", g.host, projectName(top))
	}
	code, err := r.Exec(g.ctx, repo, nil, os.Stderr, os.Stderr, "remove", "--force", "-q", branch)
	if err != nil {
		return false, err
	}
	if code != 0 {
		return false, fmt.Errorf("remove on host %s exited %d", g.host, code)
	}
	reachAfter(g.ctx, g.home, g.host)
	return false, nil
}

// hostArg is " --host NAME" for the hook command lines install writes when
// --host is given.
func hostArg(g *globals) string {
	if g.host == "" {
		return ""
	}
	return " --host " + remote.ShellJoin([]string{g.host})
}
