package world

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/warm"
	"github.com/binkyhq/binky/host/worktree"
)

// setupService is the name [worktree] setup is logged under
// (logs/<project>/<worktree>/setup.log) and marked with.
const setupService = "setup"

// teardownStep is the name [worktree] teardown is logged under
// (teardown.log) and marked with, beside setup.
const teardownStep = "teardown"

// warmWorktree makes a world's worktree warm before anything of the world
// starts (docs/warm.md): [worktree] copy once per worktree, then
// [worktree] setup when its commands or the content of its inputs changed
// since its last success. Both are remembered in $BINKY_HOME/warm, so a
// second up does neither, and a worktree removed and made again under the
// same name starts over.
func (e *Engine) warmWorktree(ctx context.Context, s Progress, w *world, rec *registry.Worktree) error {
	wc := &w.cfg.Worktree
	if len(wc.Copy) == 0 && len(wc.Setup) == 0 {
		return nil
	}
	if err := e.copyOnce(ctx, s, w.cfg, rec); err != nil {
		return err
	}
	if len(wc.Setup) == 0 {
		return nil
	}
	store := warm.NewStore(e.home)
	r, err := store.Get(rec.Project, rec.Name, rec.Path)
	if err != nil {
		return err
	}
	sum, _, err := warm.SetupSum(rec.Path, wc.Setup, wc.Inputs)
	if err != nil {
		return api.Errorf(api.CodeInvalid, "set up worktree %s: %w", rec.Name, err)
	}
	if sum == r.SetupSum {
		return nil
	}
	why := "first run in this worktree"
	if r.SetupSum != "" {
		why = "its commands or inputs changed"
	}
	s.Progress("setup", setupService, why)
	// A setup an earlier daemon started and was killed during would run
	// beside this one (two `pnpm install` in one tree): end it first.
	if err := e.endPriorRun(s, rec, setupService, setupService); err != nil {
		return api.Wrap(api.CodeFailed, err)
	}
	if err := e.runWorktreeCommands(ctx, w, rec, setupService, wc.Setup); err != nil {
		return err
	}
	r.SetupSum, r.SetupAt = sum, time.Now().UTC()
	return store.Put(rec.Project, rec.Name, r)
}

// copyOnce runs [worktree] copy once per worktree. up calls it before it
// reads env files, so a copied .env is the one read.
func (e *Engine) copyOnce(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree) error {
	if len(cfg.Worktree.Copy) == 0 {
		return nil
	}
	store := warm.NewStore(e.home)
	r, err := store.Get(rec.Project, rec.Name, rec.Path)
	if err != nil || !r.Copied.IsZero() {
		return err
	}
	if err := e.warmCopy(ctx, s, cfg, rec); err != nil {
		return err
	}
	r.Copied = time.Now().UTC()
	return store.Put(rec.Project, rec.Name, r)
}

// warmCopy copies [worktree] copy from the main worktree, or copy_from's,
// into the world's worktree.
func (e *Engine) warmCopy(ctx context.Context, s Progress, cfg *config.Config, rec *registry.Worktree) error {
	wc := &cfg.Worktree
	src := rec.Repo
	if wc.CopyFrom != "" {
		repo, err := worktree.Open(ctx, rec.Path)
		if err != nil {
			return api.Errorf(api.CodeInvalid, "find the worktree of copy_from %q: %w", wc.CopyFrom, err)
		}
		from, ok, err := repo.ForBranch(ctx, wc.CopyFrom)
		if err != nil {
			return api.Errorf(api.CodeInvalid, "find the worktree of copy_from %q: %w", wc.CopyFrom, err)
		}
		if !ok {
			return api.Errorf(api.CodeInvalid, "[worktree] copy_from names branch %q, which no worktree has checked out: run binky up %s first, or remove copy_from to copy from the main worktree", wc.CopyFrom, wc.CopyFrom)
		}
		src = from.Path
	}
	if src == "" || SamePath(src, rec.Path) {
		return nil
	}
	s.Progress("copy", "", "from "+src)
	res, err := warm.Copy(ctx, src, rec.Path, wc.Copy, warm.Options{
		Progress: func(p warm.Progress) {
			if p.Done {
				return
			}
			s.Progress("copy", "", fmt.Sprintf("%s: %d of %d files, %s of %s (%s)", p.Path, p.Files, p.TotalFiles, warmSize(p.Bytes), warmSize(p.TotalBytes), p.Mode))
		},
	})
	if err != nil {
		code := api.CodeFailed
		if errors.Is(err, warm.ErrTracked) || errors.Is(err, warm.ErrEscape) {
			code = api.CodeInvalid
		}
		return api.Errorf(code, "copy [worktree] paths into %s: %w", rec.Path, err)
	}
	msg := "nothing to copy"
	if len(res.Copied) > 0 {
		msg = fmt.Sprintf("%s: %d files, %s (%s)", strings.Join(res.Copied, ", "), res.Files, warmSize(res.Bytes), res.Mode())
	}
	if len(res.Kept) > 0 {
		msg += "; already there, kept: " + strings.Join(res.Kept, ", ")
	}
	s.Progress("copy", "", msg)
	return nil
}

// runWorktreeCommands runs each [worktree] setup (or teardown) command
// in the worktree, in its own process group marked as the world's, with
// the caller's environment, the world's coordinates (tokens through
// variables, never pasted into the command) and a time limit; output goes
// redacted to <step>.log, and a failure carries its last lines.
func (e *Engine) runWorktreeCommands(ctx context.Context, w *world, rec *registry.Worktree, step string, commands []string) error {
	wc := &w.cfg.Worktree
	logPath := filepath.Join(e.logDir(rec.Project, rec.Name), step+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log of %s: %w", step, err)
	}
	defer logf.Close()
	base := callerBase(w.caller)
	base["BINKY_PROJECT"] = rec.Project
	base["BINKY_WORKTREE"] = rec.Name
	base["BINKY_WORKTREE_PATH"] = rec.Path
	env := append(environ(base), supervisor.MarkerEnv+"="+supervisor.HookMarker(e.homeID, rec.Project, rec.Name, setupService, step))
	coords := w.coords()
	limit := wc.SetupTimeout()
	for i, command := range commands {
		run := w.renderCmd(command, "", coords)
		fmt.Fprintf(logf, "--- binky: %s[%d] at %s: %s\n", step, i, time.Now().Format(time.RFC3339), e.redact.String(command))
		var tail bytes.Buffer
		err := func() error {
			ctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			cmd := shellCommand(ctx, run.Command)
			cmd.Dir = rec.Path
			cmd.Env = withVars(env, run.Env)
			out := e.redact.Writer(logf)
			cmd.Stdout = &teeTail{w: out, tail: &tail}
			cmd.Stderr = cmd.Stdout
			runErr := runGrouped(cmd)
			out.Close()
			if ctx.Err() == context.DeadlineExceeded {
				runErr = fmt.Errorf("stopped after %s, its time limit (set timeout in [worktree] to allow more)", limit)
			}
			return runErr
		}()
		if err != nil {
			fmt.Fprintf(logf, "--- binky: %s[%d] failed: %v\n", step, i, err)
			again := "fix it and run binky up again (it runs again until it succeeds)"
			if step == teardownStep {
				again = "fix it and run binky remove again (it runs again until it succeeds), or binky remove --force to go on without it"
			}
			msg := fmt.Sprintf("%s of worktree %s failed: %q (%v); %s; last lines of %s:\n%s",
				step, rec.Name, command, err, again, logPath, lastLines(strings.Split(strings.TrimRight(tail.String(), "\n"), "\n"), 20))
			return api.Errorf(api.CodeFailed, "%s", e.redact.String(msg))
		}
	}
	return nil
}

// warmSize renders a byte count for progress lines.
func warmSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// teardown runs [worktree] teardown in rec's worktree, for remove: the
// undo of what setup made outside the worktree. A worktree already gone
// (a remove run again) or a config that no longer loads has nothing to
// run it in: that is said, and remove goes on.
func (e *Engine) teardown(ctx context.Context, s Progress, rec *registry.Worktree, caller map[string]string) error {
	if _, err := os.Stat(rec.Path); err != nil {
		return nil
	}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		s.Progress("teardown", "", "skipped: the world's binky.toml does not load: "+OneLine(err.Error()))
		return nil
	}
	if len(cfg.Worktree.Teardown) == 0 {
		return nil
	}
	w, _, err := e.recordedWorld(ctx, cfg, rec, caller)
	if err != nil {
		// ${env.*} unresolved (an env_file gone): the commands run with
		// the world's ports and slices all the same.
		if w, _, err = e.worldAsRecorded(ctx, cfg, rec); err != nil {
			return err
		}
		w.caller = caller
	}
	s.Progress("teardown", "", fmt.Sprintf("%d command(s) in %s", len(cfg.Worktree.Teardown), rec.Path))
	return e.runWorktreeCommands(ctx, w, rec, teardownStep, cfg.Worktree.Teardown)
}
