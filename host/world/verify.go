package world

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/worktree"
)

// Verify runs every [agents] verify command of a world in its worktree,
// in order, each with the exposed coordinates in its environment, streaming
// its output. Every check runs; the run is recorded against HEAD.
func (e *Engine) Verify(ctx context.Context, a api.VerifyArgs, s Progress) (*api.Verify, error) {
	rec, err := e.findWorld(ctx, a.WorldRef)
	if err != nil {
		return nil, err
	}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		return nil, err
	}
	if len(cfg.Agents.Verify) == 0 {
		return nil, api.Errorf(api.CodeInvalid, "%s has no [agents] verify commands in binky.toml", rec.Project)
	}
	exposed, err := e.Exposed(ctx, rec)
	if err != nil {
		return nil, err
	}
	env := verifyEnv(rec, exposed, a.Env, e.home)
	coords, err := e.verifyCoords(ctx, rec, cfg, a.Env)
	if err != nil {
		return nil, err
	}

	// One verify of a world at a time (two test suites in one worktree
	// clash), and none beside a run an earlier daemon left.
	vl := e.verifies.Get(Key(rec.Project, rec.Name))
	if !vl.TryLock() {
		s.Progress("verify", "", "waiting: another verify of this world is running")
		vl.Lock()
	}
	defer vl.Unlock()
	if err := e.endPriorRun(s, rec, verifyService, verifyService); err != nil {
		return nil, api.Wrap(api.CodeFailed, err)
	}

	commit, dirty := "", false
	if repo, err := worktree.Open(ctx, rec.Path); err == nil {
		commit, dirty, _ = repo.Head(ctx, rec.Path)
	}
	run := &registry.VerifyRun{WorktreeID: rec.ID, StartedAt: time.Now(), Commit: commit, Dirty: dirty, Passed: true}
	for i, command := range cfg.Agents.Verify {
		s.Progress("verify", "", command)
		start := time.Now()
		sh := renderShellCmd(command, "", coords)
		// Each check waits for a place in the jobs queue (docs/admission.md).
		release, _, err := e.jobPlace(ctx, s, rec.Project, e.jobLimits(ctx, rec, cfg))
		if err != nil {
			return nil, err
		}
		code := e.runCheck(ctx, rec, i, sh.Command, withVars(env, sh.Env), s)
		release()
		c := registry.Check{Cmd: command, ExitCode: code, Duration: time.Since(start), Passed: code == 0}
		run.Checks = append(run.Checks, c)
		run.Passed = run.Passed && c.Passed
	}
	run.Duration = time.Since(run.StartedAt)
	if err := e.reg.AddVerifyRun(ctx, run); err != nil {
		return nil, err
	}
	passed := run.Passed
	e.events.Emit(events.Event{Event: events.VerifyDone, Project: rec.Project, Worktree: rec.Name, Passed: &passed, DurationMS: run.Duration.Milliseconds()})
	out := VerifyOf(run)
	out.BrowserErrors = e.browserErrors(cfg, rec)
	if !run.Passed {
		var failed []string
		for _, c := range run.Checks {
			if !c.Passed {
				failed = append(failed, fmt.Sprintf("%q (exit %d)", c.Cmd, c.ExitCode))
			}
		}
		b, _ := json.Marshal(out)
		return nil, &api.Error{Code: api.CodeFailed, Message: fmt.Sprintf("verify failed: %s", strings.Join(failed, ", ")), Detail: b}
	}
	return out, nil
}

// verifyEnv is a check's environment: the caller's (never the daemon's),
// plus BINKY_<SVC>_URL for each exposed service (and
// BINKY_<SVC>_DIRECT_URL, its http://127.0.0.1:<port>, for one that listens
// on a port of the world's block), BINKY_ENV_JSON holding
// what `binky env` prints, and BINKY_HOME, so a check can drive this
// world's daemon (`binky env`, `binky status`). Verify commands are the
// only processes binky gives BINKY_HOME (SECURITY.md).
func verifyEnv(rec *registry.Worktree, r api.EnvResult, caller map[string]string, home string) []string {
	m := callerBase(caller)
	m["BINKY_HOME"] = home
	for k, v := range api.EnvVars(r) {
		m[k] = v
	}
	b, _ := json.Marshal(r.Env)
	m["BINKY_ENV_JSON"] = string(b)
	m["BINKY_PROJECT"] = rec.Project
	m["BINKY_WORKTREE"] = rec.Name
	m["BINKY_WORKTREE_PATH"] = rec.Path
	return environ(m)
}

// verifyCoords is what tokens in verify commands render from: the world's
// ports, URLs and slices, and the ${env.NAME} values the verify commands
// themselves reference (from the caller, then the project's env_file).
func (e *Engine) verifyCoords(ctx context.Context, rec *registry.Worktree, cfg *config.Config, caller map[string]string) (map[string]string, error) {
	envVals, err := resolveEnv(&config.Config{Project: cfg.Project, Agents: cfg.Agents}, rec.Path, caller)
	if err != nil {
		return nil, err
	}
	e.addSecrets(cfg, envVals)
	w, _, err := e.worldAsRecorded(ctx, cfg, rec)
	if err != nil {
		return nil, err
	}
	w.env, w.caller = envVals, caller
	return w.coords(), nil
}

// verifyService names verify runs in process markers and events
// ("<world marker>verify#verify"); a service of that name is still told
// apart, its markers carry no "#verify".
const verifyService = "verify"

// runCheck runs one verify command, streaming its output, and returns its
// exit code (-1 when it could not run or was killed).
func (e *Engine) runCheck(ctx context.Context, rec *registry.Worktree, i int, command string, env []string, s Progress) int {
	// Marked as the world's, in a group of its own: down and remove end a
	// check still running, and a daemon that starts ends one a killed
	// daemon left (nothing else would). runMarked gives each pipe one
	// redacting stream, so a secret that two reads split is masked whole.
	return e.runMarked(shellCommand(ctx, command), rec, env, verifyService, i, s)
}

// chunkWriter streams a command's output to the caller as output frames.
type chunkWriter struct {
	mu     sync.Mutex
	s      Progress
	check  int
	name   string
	redact func(string) string
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.s.Output(w.check, w.name, w.redact(string(p)))
	return len(p), nil
}

// VerifyOf is a recorded verify run as status shows it.
func VerifyOf(v *registry.VerifyRun) *api.Verify {
	out := &api.Verify{Passed: v.Passed, Commit: v.Commit, Dirty: v.Dirty, At: v.StartedAt, Duration: v.Duration.Milliseconds()}
	for _, c := range v.Checks {
		out.Checks = append(out.Checks, api.Check{Cmd: c.Cmd, ExitCode: c.ExitCode, Duration: c.Duration.Milliseconds(), Passed: c.Passed})
	}
	return out
}
