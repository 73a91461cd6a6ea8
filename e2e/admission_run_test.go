//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bgRun starts `binky run wt -- argv…` without waiting for it.
func (e *admEnv) startRun(wt string, argv ...string) *bgUp {
	e.t.Helper()
	u := &bgUp{done: make(chan error, 1)}
	u.cmd = exec.Command(filepath.Join(binDir, "binky"), append([]string{"run", wt, "--"}, argv...)...)
	u.cmd.Dir = e.repo
	u.cmd.Env = append(e.environ(), e.extra...)
	u.cmd.Stderr = &u.stderr
	if err := u.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { u.done <- u.cmd.Wait() }()
	e.t.Cleanup(func() { u.cmd.Process.Kill() })
	return u
}

// TestRunJobsQueue: binky run runs a command in the world's environment,
// passes its exit code and output on; with [admission] jobs = 1 a second
// run waits in FIFO order with its position and reason; under the RAM
// reserve (the pressure hook) no run starts until free RAM is back.
func TestRunJobsQueue(t *testing.T) {
	e := newAdmEnv(t, admissionConfig+"\n[admission]\njobs = 1\n")
	e.must("up", "j1")
	r := e.binky("run", "j1", "--", "sh", "-c", `echo "wt=$BINKY_WORKTREE pwd=$(pwd)"; echo oops >&2; exit 7`)
	if r.code != 7 || !strings.Contains(r.stdout, "wt=j1 pwd=") || !strings.Contains(r.stderr, "oops") {
		t.Fatalf("run: exit %d, stdout %q, stderr %q; want exit 7 with the world's environment", r.code, r.stdout, r.stderr)
	}

	// jobs = 1: a second run waits behind the first, which waits on a file.
	gate := filepath.Join(t.TempDir(), "gate")
	first := e.startRun("j1", "sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; echo first done`, gate)
	waitFor(t, "the first run to hold the job place", func() bool { return e.jobs().JobsRunning == 1 })
	second := e.startRun("j1", "echo", "second done")
	waitFor(t, "the second run queued", func() bool {
		return strings.Contains(second.stderr.String(), "position 1: jobs 1 running (project "+e.project+")")
	})
	if second.exited() {
		t.Fatalf("the second run finished while the first held the only place")
	}
	os.WriteFile(gate, nil, 0o644)
	waitFor(t, "both runs to finish", func() bool { return first.exited() && second.exited() })
	for _, u := range []*bgUp{first, second} {
		if err := <-u.done; err != nil {
			t.Errorf("run: %v\n%s", err, u.stderr.String())
		}
	}

	// Under the RAM reserve no run starts; free RAM back, it runs.
	e.must("reserve", "--ram", "20")
	e.setPressure(15, 500)
	waitFor(t, "the daemon to see the pressure", func() bool {
		p := e.admStatus().Pressure
		return p != nil && p.RAMFreePct < 16
	})
	third := e.startRun("j1", "echo", "third done")
	waitFor(t, "the third run queued by RAM", func() bool {
		return strings.Contains(third.stderr.String(), "position 1: free RAM 15% < reserve 20% (machine)")
	})
	e.setPressure(60, 500)
	waitFor(t, "the third run to finish", func() bool { return third.exited() })
	if err := <-third.done; err != nil {
		t.Errorf("third run: %v\n%s", err, third.stderr.String())
	}

	// Ctrl-C on a queued run leaves the queue.
	e.setPressure(15, 500)
	waitFor(t, "the daemon to see the pressure", func() bool { return e.admStatus().Pressure.RAMFreePct < 16 })
	fourth := e.startRun("j1", "echo", "never")
	waitFor(t, "the fourth run queued", func() bool { return strings.Contains(fourth.stderr.String(), "position 1:") })
	fourth.cmd.Process.Signal(os.Interrupt)
	waitFor(t, "the fourth run to leave", func() bool { return fourth.exited() && e.jobs().JobsQueued == 0 })
}

type jobsJSON struct {
	Jobs        int `json:"jobs"`
	JobsRunning int `json:"jobs_running"`
	JobsQueued  int `json:"jobs_queued"`
}

// jobs is the jobs queue as status --json reports it.
func (e *admEnv) jobs() jobsJSON {
	e.t.Helper()
	var s struct {
		Pressure jobsJSON `json:"pressure"`
	}
	if err := jsonUnmarshal(e.must("status", "--json").stdout, &s); err != nil {
		e.t.Fatal(err)
	}
	return s.Pressure
}

// TestMCPRunTool: the MCP run tool runs a command in the world's
// environment through the jobs queue and returns its exit code and output
// tail; a non-zero exit is a tool error.
func TestMCPRunTool(t *testing.T) {
	e := newAdmEnv(t, admissionConfig)
	e.must("up", "m1")
	c := e.startMCP()
	r := c.call("run", map[string]any{"worktree": "m1", "command": `echo "in $BINKY_WORKTREE"; exit 3`}, "run-1")
	var res struct {
		ExitCode   int    `json:"exit_code"`
		OutputTail string `json:"output_tail"`
		Worktree   string `json:"worktree"`
	}
	if err := jsonUnmarshal(string(r.structured), &res); err != nil {
		t.Fatalf("run result %s: %v", r.structured, err)
	}
	if !r.isError || res.ExitCode != 3 || res.OutputTail != "in m1\n" || res.Worktree != "m1" {
		t.Errorf("run: isError %v, %+v; want a tool error with exit 3 and the output", r.isError, res)
	}
}

// TestVerifyChecksWaitInJobsQueue: a verify check is a heavy command like
// binky run's, so with [admission] jobs = 1 it waits behind a running job,
// saying its position and why, and runs once the place is free.
func TestVerifyChecksWaitInJobsQueue(t *testing.T) {
	e := newAdmEnv(t, admissionConfig+"\n[agents]\nverify = [\"echo checked > verified\"]\n\n[admission]\njobs = 1\n")
	e.must("up", "j1")
	gate := filepath.Join(t.TempDir(), "gate")
	holder := e.startRun("j1", "sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done`, gate)
	waitFor(t, "the run to hold the only job place", func() bool { return e.jobs().JobsRunning == 1 })

	v := &bgUp{done: make(chan error, 1)}
	v.cmd = exec.Command(filepath.Join(binDir, "binky"), "verify", "j1")
	v.cmd.Dir = e.repo
	v.cmd.Env = append(e.environ(), e.extra...)
	v.cmd.Stderr = &v.stderr
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { v.done <- v.cmd.Wait() }()
	t.Cleanup(func() { v.cmd.Process.Kill() })
	waitFor(t, "the verify check queued", func() bool {
		return strings.Contains(v.stderr.String(), "position 1: jobs 1 running (project "+e.project+")")
	})
	path := e.status().world(t, "j1").Path
	checked := func() bool { _, err := os.Stat(filepath.Join(path, "verified")); return err == nil }
	if v.exited() || checked() {
		t.Fatalf("the verify check ran while a run held the only job place:\n%s", v.stderr.String())
	}
	os.WriteFile(gate, nil, 0o644)
	waitFor(t, "the verify to finish", func() bool { return v.exited() })
	if err := <-v.done; err != nil {
		t.Fatalf("verify: %v\n%s", err, v.stderr.String())
	}
	if !checked() {
		t.Errorf("the check did not run in the world's worktree %s", path)
	}
	waitFor(t, "the run to finish", func() bool { return holder.exited() })
}
