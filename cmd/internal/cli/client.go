package cli

import (
	"context"
	"os"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ctl"
)

// Client returns a client for home's daemon, starting it (binkyd daemon
// run, found by ctl.DaemonBinary) when none answers.
func Client(ctx context.Context, home string) (*api.Client, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return ctl.Ensure(ctx, home, exe)
}

// WorldRef builds a WorldRef from a worktree-or-branch argument (empty:
// the worktree the current directory is in) and an optional project, with
// the caller's environment.
func WorldRef(name, project string) api.WorldRef {
	wd, _ := os.Getwd()
	return api.WorldRef{Name: name, Dir: wd, Project: project, Env: CallerEnv()}
}

// CallerEnv is this process's whole environment, which the daemon gives
// the services, hooks and checks a verb starts, and resolves ${env.NAME}
// from; it never uses its own.
func CallerEnv() map[string]string {
	return api.EnvMap(os.Environ())
}
