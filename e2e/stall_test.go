//go:build linux

package e2e

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const stallConfig = `
[project]
name = "stall"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
`

// startStalledRun starts `binky run wt -- sh -c 'yes | head -c 50000000;
// exec sleep 600'` with its stdout a pipe nobody reads: the CLI blocks
// writing it, stops reading the daemon's socket, and the socket's buffer
// fills. The command then sleeps, so it holds its job place until it is
// ended: a run gives its place back when its command ends, before its
// output has reached the caller, and 50 MB written to the run's files can
// end before a status sees the place taken.
func (e *env) startStalledRun(wt string) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "binky"), "run", wt, "--", "sh", "-c", "yes | head -c 50000000; exec sleep 600")
	cmd.Dir = e.repo
	cmd.Env = e.environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		stdout.Close()
		cmd.Wait()
	})
}

// jobsRunning is how many commands hold a place in the jobs queue.
func (e *env) jobsRunning() int {
	e.t.Helper()
	var s struct {
		Pressure jobsJSON `json:"pressure"`
	}
	if err := jsonUnmarshal(e.must("status", "--json").stdout, &s); err != nil {
		e.t.Fatal(err)
	}
	return s.Pressure.JobsRunning
}

// TestStalledCallerFreezesNothing: a `binky run` printing 50 MB to a
// stdout nobody reads holds neither the world nor the daemon. A `binky
// down` of the world from another process succeeds; the run loses its
// stream (daemon.log says so), its command ends and its job place is
// given back; and `binky daemon stop` returns while a second such run is
// stalled.
func TestStalledCallerFreezesNothing(t *testing.T) {
	e := newEnv(t, stallConfig)
	e.must("up", "s1")
	e.startStalledRun("s1")
	waitFor(t, "the stalled run to hold a job place", func() bool { return e.jobsRunning() == 1 })
	e.must("down", "s1")
	waitFor(t, "the stalled run to lose its stream and give its job place back", func() bool {
		return strings.Contains(e.daemonLog(), "a caller stopped reading") && e.jobsRunning() == 0
	})

	e.must("up", "s1")
	e.startStalledRun("s1")
	waitFor(t, "the second stalled run to hold a job place", func() bool { return e.jobsRunning() == 1 })
	e.must("daemon", "stop")
}
