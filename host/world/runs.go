package world

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/internal/shareopen"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
)

// A binky run that asks for no input survives a daemon restart (issue 40
// item 4): it is journaled in BINKY_HOME/runs/<id>/ before it queues, its
// command writes its output to files there (not to pipes the daemon
// holds), and a small shell wrapper writes its exit status there when it
// ends. The next daemon re-queues the journaled runs that had not started,
// in their order, and waits for the ones still running (holding their job
// places) to record their end. A caller whose daemon went away follows
// the same run again by its id (RunArgs.Resume) from the offsets it had.

// Run states in the journal.
const (
	runQueued  = "queued"
	runRunning = "running"
	runDone    = "done"
)

// runRecord is one journaled run (run.json, 0600: it holds the caller's
// environment, which the command runs with).
type runRecord struct {
	ID      string         `json:"id"`
	Seq     int64          `json:"seq"` // queue order: when it queued, in ns
	Args    api.RunArgs    `json:"args"`
	Project string         `json:"project"`
	World   string         `json:"worktree"`
	State   string         `json:"state"`
	Pid     int            `json:"pid,omitempty"`
	Started time.Time      `json:"started,omitzero"`
	Result  *api.RunResult `json:"result,omitempty"`
	// NotStarted says why a run that was queued never ran.
	NotStarted string `json:"not_started,omitempty"`
	// Limits are what the jobs queue counts the run for (its project's
	// bounds, its connections on each of its world's servers), as when it
	// first queued; absent in a journal an older binky wrote (runLimits).
	Limits *admission.JobLimits `json:"limits,omitempty"`
}

func (e *Engine) runsDir() string { return filepath.Join(e.home, "runs") }

func (e *Engine) runDir(id string) string { return filepath.Join(e.runsDir(), id) }

func newRunID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// saveRun writes r's record atomically.
func (e *Engine) saveRun(r *runRecord) error {
	dir := e.runDir(r.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal run %s: %w", r.ID, err)
	}
	b, _ := json.Marshal(r)
	tmp := filepath.Join(dir, "run.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("journal run %s: %w", r.ID, err)
	}
	// A follower reads run.json every tick: on Windows the rename waits
	// for its handle (shareopen.Replace) instead of losing the record.
	if err := shareopen.Replace(tmp, filepath.Join(dir, "run.json")); err != nil {
		return fmt.Errorf("journal run %s: %w", r.ID, err)
	}
	return nil
}

// loadRun reads the record of run id.
func (e *Engine) loadRun(id string) (*runRecord, error) {
	if id == "" || filepath.Base(id) != id || id[0] == '.' {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(e.runDir(id), "run.json"))
	if err != nil {
		return nil, err
	}
	var r runRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("run %s: unreadable record: %w", id, err)
	}
	return &r, nil
}

// journaledRuns lists the runs in the journal, in queue order; done ones
// older than a day are deleted on the way.
func (e *Engine) journaledRuns() []*runRecord {
	ents, _ := os.ReadDir(e.runsDir())
	var out []*runRecord
	for _, d := range ents {
		r, err := e.loadRun(d.Name())
		if err != nil {
			continue
		}
		if r.State == runDone && r.Result != nil && time.Since(r.Started) > 24*time.Hour {
			os.RemoveAll(e.runDir(r.ID))
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// runMarker marks a journaled run's processes: the world's marker and
// "run@<id>", with no "#step", so the sweep of one-shot runs a killed
// daemon left (endLeftHooks) keeps it; down and remove end it as any
// process of the world.
func (e *Engine) runMarker(r *runRecord) string {
	return supervisor.WorldMarker(e.homeID, r.Project, r.World) + runService + "@" + r.ID
}

// exitPath is where the wrapper writes the command's exit status.
func (e *Engine) exitPath(id string) string { return filepath.Join(e.runDir(id), "exit") }

// runEnded reports whether r's command ended, and its exit code (-1 when
// it was killed before the wrapper could record one). The wrapper writes
// the status and its newline at once: a file without the newline is one
// it has not finished writing (or was killed writing).
func (e *Engine) runEnded(r *runRecord) (bool, int) {
	read := func() (int, bool) {
		b, err := os.ReadFile(e.exitPath(r.ID))
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return -1, true
		}
		return n, true
	}
	if code, ok := read(); ok {
		return true, code
	}
	if runAlive(r.Pid, e.runMarker(r)) {
		return false, 0
	}
	if code, ok := read(); ok {
		return true, code
	}
	return true, -1
}

// runJournaled starts r's command detached (output to its files, exit
// status by the wrapper), marks it running, streams its output to s until
// it ends and records how. The command ends early only when the caller
// hangs up (cctx ends while ctx, the daemon's, does not); a daemon that
// stops leaves it running for the next one. release (the job place, once
// only) is called as soon as the daemon reaped the command, or could not
// start it: the next job in the queue starts while this one's output is
// still streamed and its end recorded, whatever the pace of its caller.
func (e *Engine) runJournaled(ctx, cctx context.Context, r *runRecord, rec *registry.Worktree, env []string, waited time.Duration, s Progress, release func()) (*api.RunResult, error) {
	argv := r.Args.Argv
	if r.Args.Command != "" {
		argv = shellArgv(r.Args.Command)
	}
	env = append(env, supervisor.MarkerEnv+"="+e.runMarker(r))
	pid, wait, err := startRun(rec.Path, env, argv, e.exitPath(r.ID), filepath.Join(e.runDir(r.ID), "stdout"), filepath.Join(e.runDir(r.ID), "stderr"))
	start := time.Now()
	if err != nil {
		release()
		r.State = runDone
		r.Result = &api.RunResult{Project: r.Project, Worktree: r.World, ExitCode: -1, WaitedMS: waited.Milliseconds()}
		e.saveRun(r)
		s.Output(0, "stderr", fmt.Sprintf("binky: %v\n", err))
		return r.Result, nil
	}
	r.State, r.Pid, r.Started = runRunning, pid, start
	if err := e.saveRun(r); err != nil {
		e.log.Warn("journal a running run", "run", r.ID, "error", err)
	}
	go func() {
		<-wait
		release()
	}()
	go func() {
		select {
		case <-cctx.Done():
			if ctx.Err() == nil {
				killRun(pid) // the caller hung up
			}
		case <-wait:
		}
	}()
	res, err := e.followRun(ctx, r.ID, [2]int64{}, s, wait)
	if err != nil {
		return nil, err
	}
	res.WaitedMS = waited.Milliseconds()
	return res, nil
}

// followRun streams run id's output from off to s until it ends, then
// returns its result, recording it when the journal does not have it yet.
// reaped, when not nil, closes once the command (the daemon's child) was
// waited for; without it, the end of a running command is learnt from a
// pidfd on its wrapper where one can be had (supervisor.ExitOf), else by
// looking for it at each tick. A queued run is waited for; one that never
// started is an error saying why.
func (e *Engine) followRun(ctx context.Context, id string, off [2]int64, s Progress, reaped <-chan struct{}) (*api.RunResult, error) {
	watched := reaped != nil
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watch
	told := false
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := e.loadRun(id)
		if err != nil {
			return nil, api.Errorf(api.CodeNotFound, "run %s: not in this daemon's journal (%s)", id, e.runDir(id))
		}
		switch {
		case r.NotStarted != "":
			return nil, api.Errorf(api.CodeFailed, "run %s was not started: %s", id, r.NotStarted)
		case r.State == runQueued:
			if !told {
				s.Progress("queued", "", fmt.Sprintf("run %s waits in the jobs queue (it kept its place)", id))
				told = true
			}
		default:
			if !watched && r.State == runRunning {
				watched = true
				reaped = supervisor.ExitOf(wctx, r.Pid, e.runMarker(r)) // nil: look at each tick
			}
			ended, code := false, 0
			if r.State == runDone && r.Result != nil {
				ended, code = true, r.Result.ExitCode
			} else if reaped == nil || isClosed(reaped) {
				ended, code = e.runEnded(r)
			}
			e.streamRunOutput(r, &off, s, ended)
			if ended {
				if r.Result == nil {
					r.State = runDone
					r.Result = &api.RunResult{Project: r.Project, Worktree: r.World, ExitCode: code, DurationMS: time.Since(r.Started).Milliseconds()}
					e.saveRun(r)
				}
				res := *r.Result
				return &res, nil
			}
		}
		// A follower that wants only the end (followNoOutput) of a
		// watched command waits for the watch alone.
		ticks := tick.C
		if reaped != nil && off == followNoOutput {
			ticks = nil
		}
		select {
		case <-ctx.Done():
			return nil, api.Errorf(api.CodeFailed, "run %s: the daemon is stopping; the command goes on and the next daemon follows it (binky run follows it again): %v", id, context.Cause(ctx))
		case <-ticks:
		case <-reaped:
			reaped = nil // gone: look at each tick from now on (watched stays)
		}
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// streamRunOutput sends what r's output files have past off, redacted,
// and moves off. While the command runs, a chunk ends at its last newline
// (so a secret is never split between two redactions) unless it has none
// for 4 KB; at the end everything goes.
func (e *Engine) streamRunOutput(r *runRecord, off *[2]int64, s Progress, final bool) {
	for i, name := range [2]string{"stdout", "stderr"} {
		for {
			b, err := readFrom(filepath.Join(e.runDir(r.ID), name), off[i], 256<<10)
			if err != nil || len(b) == 0 {
				break
			}
			if !final {
				if nl := bytes.LastIndexByte(b, '\n'); nl >= 0 {
					b = b[:nl+1]
				} else if len(b) < 4<<10 {
					break
				}
			}
			off[i] += int64(len(b))
			sendOutput(s, name, e.redact.String(string(b)), off[i])
			if len(b) < 256<<10 {
				break
			}
		}
	}
}

func readFrom(path string, off int64, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, max)
	n, err := f.ReadAt(b, off)
	if n > 0 {
		return b[:n], nil
	}
	if err == io.EOF {
		return nil, nil
	}
	return nil, err
}

// sendOutput sends one output frame with its offset where s takes whole
// frames (a Stream), else as plain output.
func sendOutput(s Progress, name, data string, off int64) {
	if f, ok := s.(interface{ Send(api.Frame) }); ok {
		f.Send(api.Frame{Output: &api.Output{Stream: name, Data: data, Offset: off}})
		return
	}
	s.Output(0, name, data)
}

// ResumeRuns, at daemon start once the admission queue is set, takes over
// the journaled runs a previous daemon left: a running one counts at once
// (its job place and its connections, ahead of every queued one) until it
// ends, then its end is recorded; a queued one queues again in its order,
// counted for what it first queued with, and runs with no caller,
// followed by whoever comes back (RunArgs.Resume); one whose world is gone
// is recorded as not started.
func (e *Engine) ResumeRuns(ctx context.Context) {
	if !supervisedRuns {
		return
	}
	runs := e.journaledRuns()
	for _, r := range runs {
		if r.State != runRunning {
			continue
		}
		if ended, _ := e.runEnded(r); ended {
			e.followRun(ctx, r.ID, followNoOutput, NoProgress{}, nil)
			continue
		}
		e.adoptRun(ctx, r)
	}
	for _, r := range runs {
		if r.State == runQueued {
			e.resumeRun(ctx, r)
		}
	}
}

// followNoOutput are the offsets of a follower that wants only the end.
var followNoOutput = [2]int64{1 << 62, 1 << 62}

// runLimits are what r is counted for in the jobs queue: what it recorded
// when it first queued. A journal an older binky wrote has none: they are
// recomputed from the world's config and its slices' recorded servers, as
// a new run of the world would be counted now (jobLimits); with the
// world's record gone, the run counts for its job place only (its servers
// are not known any more).
func (e *Engine) runLimits(ctx context.Context, r *runRecord, rec *registry.Worktree) admission.JobLimits {
	if r.Limits != nil {
		return *r.Limits
	}
	if rec == nil {
		return admission.JobLimits{}
	}
	cfg, err := e.worldConfig(rec)
	if err != nil {
		cfg = nil
	}
	return e.jobLimits(ctx, rec, cfg)
}

// adoptRun takes over r, a command a previous daemon started that still
// runs: it counts in the jobs queue at once, for its job place and its
// connections, until it ends (learnt from a pidfd on its wrapper where
// there is one, else by polling), then its end is recorded.
func (e *Engine) adoptRun(ctx context.Context, r *runRecord) {
	release := func() {}
	if e.adm != nil && !e.admOff {
		rec, _ := e.findWorld(ctx, r.Args.WorldRef)
		release = e.adm.Adopt(r.Project, e.runLimits(ctx, r, rec))
	}
	go func() {
		defer release()
		e.followRun(ctx, r.ID, followNoOutput, NoProgress{}, nil)
	}()
}

// resumeRun queues r, a journaled run that had not started, again and
// returns once it holds its place in the queue, so the next one queues
// behind it; it runs in the background.
func (e *Engine) resumeRun(ctx context.Context, r *runRecord) {
	notStarted := func(why string) {
		r.State, r.NotStarted = runDone, why
		e.saveRun(r)
		e.log.Warn("a journaled run was not started", "run", r.ID, "reason", why)
	}
	rec, err := e.findWorld(ctx, r.Args.WorldRef)
	if err != nil {
		notStarted(fmt.Sprintf("its world %s/%s is gone: %v", r.Project, r.World, err))
		return
	}
	queued := make(chan struct{})
	var once sync.Once
	mark := func() { once.Do(func() { close(queued) }) }
	go func() {
		start := time.Now()
		release := func() {}
		if e.adm != nil && !e.admOff {
			rel, err := e.adm.Job(ctx, r.Project, e.runLimits(ctx, r, rec), func(admission.Wait) { mark() })
			mark()
			if err != nil {
				if ctx.Err() == nil {
					notStarted(err.Error())
				}
				return
			}
			release = sync.OnceFunc(rel)
		}
		mark()
		defer release()
		exposed, err := e.Exposed(ctx, rec)
		if err != nil {
			notStarted(fmt.Sprintf("read the environment of %s/%s: %v", r.Project, r.World, err))
			return
		}
		env := verifyEnv(rec, exposed, r.Args.Env, e.home)
		if _, err := e.runJournaled(ctx, ctx, r, rec, env, time.Since(start), NoProgress{}, release); err != nil {
			e.log.Warn("a resumed run", "run", r.ID, "error", err)
		}
	}()
	<-queued
}
