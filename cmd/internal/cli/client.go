package cli

import (
	"context"
	"errors"
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

// Ask runs a read-only call (env, status) against home's daemon with the
// call itself as the ping: a running daemon answers in one round trip
// instead of two (issue 44). When the call fails without the daemon's
// answer — nothing listens, or the daemon hung up — it is asked again
// the way Client asks: the daemon pinged until it settles, started when
// none runs, and Client's error returned as Client's caller would. A
// daemon's own error (an *api.Error in call's error) is call's answer.
func Ask(ctx context.Context, home string, call func(*api.Client) error) error {
	err := call(&api.Client{Home: home})
	var answered *api.Error
	if err == nil || errors.As(err, &answered) || ctx.Err() != nil {
		return err
	}
	cl, err := Client(ctx, home)
	if err != nil {
		return err
	}
	return call(cl)
}
