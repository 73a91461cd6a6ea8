package doctor

import (
	"context"
	"errors"
	"os"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ctl"
)

// checkDaemon pings the daemon (never starting one) and checks its socket.
func checkDaemon(ctx context.Context, e *Env) []Finding {
	var out []Finding
	sock := api.Socket(e.Home)
	st, err := os.Lstat(sock)
	if err == nil {
		out = append(out, socketMode(sock, st)...)
	}
	p, err := ctl.Ping(ctx, e.Home)
	switch {
	case errors.Is(err, api.ErrNoDaemon) || err != nil && os.IsNotExist(err):
		return append(out, ok("no daemon is running for %s (the next binky up starts one)", e.Home))
	case err != nil:
		return append(out, fail("binky daemon stop && binky daemon start", "the daemon does not answer on %s: %v", sock, err))
	}
	out = append(out, ok("the daemon answers (pid %d, version %s)", p.Pid, p.Version))
	if e.Version != "" && p.Version != e.Version {
		out = append(out, warn("binky daemon stop && binky daemon start",
			"the daemon runs version %s but this binky is %s: it keeps the old behaviour until restarted", p.Version, e.Version))
	}
	return out
}
