package warm

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/config"
)

// Check is what `binky check` adds for [worktree]: a copy glob that
// matches a path git tracks in the worktree the file lives in is an error
// (up would refuse it: copying it would hide the branch's own version).
// name is the file name the diagnostics carry, path the file itself. Outside
// a git repository, or without git, it says nothing.
func Check(ctx context.Context, name, path string, cfg *config.Config) config.Diagnostics {
	if cfg == nil || len(cfg.Worktree.Copy) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", filepath.Dir(path), "rev-parse", "--show-toplevel")
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	root := strings.TrimSpace(string(out))
	var ds config.Diagnostics
	for i, g := range cfg.Worktree.Copy {
		if CheckGlob(g) != nil {
			continue // the decoder reported it
		}
		matches, err := Match(root, []string{g})
		if err != nil || len(matches) == 0 {
			continue
		}
		tracked, err := GitTracked(ctx, root, matches)
		if err != nil || len(tracked) == 0 {
			continue
		}
		ds = append(ds, config.Diagnostic{
			File: name, Line: cfg.Line("worktree", "copy"), Severity: config.SeverityError,
			Message: fmt.Sprintf("worktree.copy[%d] %q matches %s, which git tracks: binky up refuses to copy it over the branch's own version", i, g, strings.Join(tracked, ", ")),
			Hint:    "copy only ignored paths (git check-ignore -v <path> shows which are); narrow the glob",
		})
	}
	return ds
}
