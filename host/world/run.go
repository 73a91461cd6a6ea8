package world

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/golden"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
)

// runService names `binky run` commands in process markers
// ("<world marker>run#run"): down and remove end one still running.
const runService = "run"

// Run runs one command in a world's worktree with the environment verify
// gives its checks, once the jobs queue (host/admission) lets it start. Its
// output streams back redacted; a caller that hangs up leaves the queue,
// or ends the command.
func (e *Engine) Run(ctx context.Context, a api.RunArgs, s Progress) (*api.RunResult, error) {
	if a.Resume != "" {
		// A followed run's journal stays its day: the daemon may still be
		// recording its end.
		return e.followRun(ctx, a.Resume, a.Offsets, s, nil)
	}
	if (len(a.Argv) == 0) == (a.Command == "") {
		return nil, api.Errorf(api.CodeInvalid, "give the command to run: binky run <worktree> -- <command> [args…]")
	}
	rec, err := e.findWorld(ctx, a.WorldRef)
	if err != nil {
		return nil, err
	}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	exposed, err := e.Exposed(ctx, rec)
	if err != nil {
		return nil, err
	}
	env := verifyEnv(rec, exposed, a.Env, e.home)
	var in Input
	if a.Stdin || a.TTY != nil {
		var ok bool
		if in, ok = s.(Input); !ok {
			return nil, api.Errorf(api.CodeInvalid, "this caller cannot send a command's input")
		}
		if a.TTY != nil && !ttySupported {
			return nil, api.Errorf(api.CodeInvalid, "binky run -t: a terminal is not supported on this system yet; use -i for piped stdin")
		}
	}

	// The command ends when its caller hangs up; a caller that only stops
	// reading (a paused pager) loses the rest of the output, and the
	// command runs to its end.
	cctx, cancel := UntilHungUp(ctx, s)
	defer cancel()
	if supervisedRuns && in == nil {
		res, err := e.runSupervised(ctx, cctx, a, rec, cfg, env, s)
		if !errors.Is(err, errNoJournal) {
			return res, err
		}
		// A home that takes no writes (a full disk) still runs it, as
		// before: one that does not outlive the daemon.
		e.log.Warn("binky run not journaled: it ends with the daemon", "error", err)
	}
	release, waited, err := e.jobPlace(cctx, s, rec.Project, e.jobLimits(ctx, rec, cfg))
	if err != nil {
		return nil, err
	}
	defer release()

	var cmd *exec.Cmd
	if a.Command != "" {
		cmd = shellCommand(cctx, a.Command)
	} else {
		cmd = exec.CommandContext(cctx, a.Argv[0], a.Argv[1:]...)
	}
	start := time.Now()
	var code int
	switch {
	case a.TTY != nil:
		code = e.runTTY(cmd, rec, env, *a.TTY, in, s)
	case a.Stdin:
		code = e.runStdin(cmd, rec, env, in, s)
	default:
		code = e.runMarked(cmd, rec, env, runService, 0, s)
	}
	return &api.RunResult{
		Project: rec.Project, Worktree: rec.Name, ExitCode: code,
		DurationMS: time.Since(start).Milliseconds(), WaitedMS: waited.Milliseconds(),
	}, nil
}

// jobLimits are what one command of rec's world (binky run, a verify
// check) is counted for in the jobs queue under cfg: its project's bounds,
// and its connections on each server of the world's slices. With no cfg
// (unreadable) it has no bounds of its own and the default connections.
func (e *Engine) jobLimits(ctx context.Context, rec *registry.Worktree, cfg *config.Config) admission.JobLimits {
	lim := admission.JobLimits{Servers: e.jobServers(ctx, rec), Connections: config.DefaultJobConnections}
	if cfg != nil {
		lim.Jobs, lim.RAMReserve, lim.ConnBound = cfg.Project.Jobs, cfg.Project.RAMReserve, cfg.Project.Connections
		lim.Connections = cmp.Or(cfg.Project.JobConnections, config.DefaultJobConnections)
	}
	return lim
}

// jobPlace waits in the jobs queue for a place for one command of
// project under lim (jobLimits), reporting its position and reason as
// progress. It returns the release to call once the command ends, and how
// long it waited.
func (e *Engine) jobPlace(ctx context.Context, s Progress, project string, lim admission.JobLimits) (func(), time.Duration, error) {
	if e.adm == nil || e.admOff {
		return func() {}, 0, nil
	}
	wctx, cancel := UntilGone(ctx, s)
	defer cancel()
	start := time.Now()
	queued := false
	release, err := e.adm.Job(wctx, project, lim, func(w admission.Wait) {
		queued = true
		s.Progress("queued", "", fmt.Sprintf("position %d: %s", w.Position, w.Reason))
	})
	if err != nil {
		return nil, 0, api.Wrap(api.CodeFailed, err)
	}
	waited := time.Since(start)
	if queued {
		s.Progress("admitted", "", "waited "+waited.Round(time.Millisecond).String())
	}
	return release, waited, nil
}

// jobServers are the servers of rec's slices (golden.Server of each
// recorded address), where a job of the world is counted for its
// connections ([admission] connections).
func (e *Engine) jobServers(ctx context.Context, rec *registry.Worktree) []string {
	svcs, err := e.reg.Services(ctx, rec.ID)
	if err != nil {
		return nil
	}
	var out []string
	for _, sv := range svcs {
		if sv.Kind != registry.KindAdapter || sv.Address == "" {
			continue
		}
		if srv := golden.Server(sv.Address); srv != "" && !slices.Contains(out, srv) {
			out = append(out, srv)
		}
	}
	return out
}

// runMarked runs cmd in rec's worktree with env, marked as the world's
// (service#service) in a process group of its own, streaming its output
// redacted as output frames numbered i, and returns its exit code (-1 when
// it could not run or was killed).
func (e *Engine) runMarked(cmd *exec.Cmd, rec *registry.Worktree, env []string, service string, i int, s Progress) int {
	e.mark(cmd, rec, env, service)
	asIs := func(s string) string { return s }
	stdout := e.redact.Writer(&chunkWriter{s: s, check: i, name: "stdout", redact: asIs})
	stderr := e.redact.Writer(&chunkWriter{s: s, check: i, name: "stderr", redact: asIs})
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := runGrouped(cmd)
	stdout.Close()
	stderr.Close()
	if err == nil {
		return 0
	}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() >= 0 {
		return cmd.ProcessState.ExitCode()
	}
	s.Output(i, "stderr", fmt.Sprintf("binky: %v\n", err))
	return -1
}

// mark sets cmd to run in rec's worktree with env and the marker of the
// world's service (service#service): down and remove end it, and a daemon
// that starts ends one a killed daemon left.
func (e *Engine) mark(cmd *exec.Cmd, rec *registry.Worktree, env []string, service string) {
	cmd.Dir = rec.Path
	cmd.Env = append(env, supervisor.MarkerEnv+"="+supervisor.HookMarker(e.homeID, rec.Project, rec.Name, service, service))
}

// runStdin is runMarked for binky run -i: the command's stdin is a pipe fed
// with the caller's Input lines once it started (Attach), closed at the
// caller's EOF.
func (e *Engine) runStdin(cmd *exec.Cmd, rec *registry.Worktree, env []string, in Input, s Progress) int {
	r, w, err := os.Pipe()
	if err != nil {
		s.Output(0, "stderr", fmt.Sprintf("binky: stdin pipe: %v\n", err))
		return -1
	}
	defer r.Close()
	defer w.Close() // also ends a write the command no longer reads
	cmd.Stdin = r
	inputs, stop := in.Attach(api.Attach{})
	defer stop()
	go feedStdin(inputs, w, nil)
	return e.runMarked(cmd, rec, env, runService, 0, s)
}

// feedStdin writes the caller's input to w until its EOF (then closes w)
// or hang-up; resize, when not nil, takes a terminal's new size.
func feedStdin(inputs <-chan api.Input, w io.WriteCloser, resize func(api.Winsize)) {
	for in := range inputs {
		if in.Size != nil && resize != nil {
			resize(*in.Size)
		}
		if len(in.Data) > 0 {
			if _, err := w.Write(in.Data); err != nil {
				return
			}
		}
		if in.EOF && resize == nil {
			w.Close()
			return
		}
	}
}

// runSupervised is Run for a command that takes no input: journaled
// before it queues (its id goes to the caller as the ProgressRunID step),
// its output in files and its end recorded by a wrapper, so it survives a
// daemon restart (runs.go). A caller that hangs up while it waits leaves
// the queue; a daemon that stops keeps its place for the next one.
func (e *Engine) runSupervised(ctx, cctx context.Context, a api.RunArgs, rec *registry.Worktree, cfg *config.Config, env []string, s Progress) (*api.RunResult, error) {
	// What it is counted for goes in the journal with it: the daemon that
	// takes it over counts it for the same (resumeRun, adoptRun).
	lim := e.jobLimits(ctx, rec, cfg)
	r := &runRecord{ID: newRunID(), Seq: time.Now().UnixNano(), Args: a, Project: rec.Project, World: rec.Name, State: runQueued, Limits: &lim}
	r.Args.Name, r.Args.Project = rec.Name, rec.Project
	if err := e.saveRun(r); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoJournal, err)
	}
	s.Progress(api.ProgressRunID, "", r.ID)
	release, waited, err := e.jobPlace(cctx, s, rec.Project, lim)
	if err != nil {
		if ctx.Err() == nil {
			r.State, r.NotStarted = runDone, "its caller left the queue"
			e.saveRun(r)
		}
		return nil, err
	}
	// The place goes back the moment the command ends (runJournaled),
	// before its output is streamed and its end recorded; here at the
	// latest.
	release = sync.OnceFunc(release)
	defer release()
	res, err := e.runJournaled(ctx, cctx, r, rec, env, waited, s, release)
	e.forgetRun(r.ID, err, s)
	return res, err
}

// forgetRun deletes run id's journal once its caller, still there, has
// everything but the result frame about to be sent; a run whose caller is
// gone stays a day for it to follow (journaledRuns).
func (e *Engine) forgetRun(id string, err error, s Progress) {
	if err != nil || isClosed(s.Gone()) {
		return
	}
	os.RemoveAll(e.runDir(id))
}

// errNoJournal means a run could not be journaled (its home takes no
// writes): Run runs it the old way.
var errNoJournal = errors.New("journal the run")
