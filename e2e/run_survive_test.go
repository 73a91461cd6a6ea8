//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bgRun is a binky run started in the background.
type bgRun struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuf
	done           chan struct{}
	err            error
}

func (e *env) startRunBg(args ...string) *bgRun {
	e.t.Helper()
	r := &bgRun{done: make(chan struct{})}
	r.cmd = exec.Command(filepath.Join(binDir, "binky"), append([]string{"run"}, args...)...)
	r.cmd.Dir = e.repo
	r.cmd.Env = append(e.environ(), e.extra...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.done) }()
	e.t.Cleanup(func() { r.cmd.Process.Kill() })
	return r
}

// TestRunsSurviveDaemonKill: 20 binky runs, one running (waiting on a file
// the test creates) and 19 queued behind it ([admission] jobs = 1), when
// the daemon is killed with SIGKILL (issue 40 item 4). The running command
// is not cut (it prints its end once the file is there), the queued ones
// keep their place (they start in the order they queued), none runs twice
// and none is lost: every caller follows its run through the next daemon
// and exits with its status and whole output.
func TestRunsSurviveDaemonKill(t *testing.T) {
	e := newEnv(t, runStdinConfig+"\n[admission]\njobs = 1\n")
	e.must("up", "k1")
	dir := t.TempDir()
	script := `echo "$1" >> "$0/order"; echo "begin $1"; while [ ! -e "$0/go" ]; do sleep 0.05; done; echo "end $1"; exit "$2"`
	const n = 20
	runs := make([]*bgRun, n)
	order := func() string { b, _ := os.ReadFile(filepath.Join(dir, "order")); return string(b) }
	for i := range n {
		runs[i] = e.startRunBg("k1", "--", "sh", "-c", script, dir, fmt.Sprint(i), fmt.Sprint(i%3))
		if i == 0 {
			waitFor(t, "the first run to start", func() bool { return order() == "0\n" })
			continue
		}
		want := fmt.Sprintf("position %d:", i)
		waitFor(t, "run "+fmt.Sprint(i)+" queued", func() bool { return strings.Contains(runs[i].stderr.String(), want) })
	}
	waitFor(t, "the first run's output to reach its caller", func() bool { return runs[0].stdout.String() == "begin 0\n" })

	kill9Daemon(t, e)

	// The callers come back with a new daemon, which keeps the running
	// command's place and queues the 19 again.
	waitOneRunningRestQueued(t, e, n, order)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)

	var want strings.Builder
	for i := range n {
		<-runs[i].done
		code := 0
		if ee, ok := runs[i].err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if runs[i].err != nil {
			t.Fatalf("run %d: %v", i, runs[i].err)
		}
		if code != i%3 || runs[i].stdout.String() != fmt.Sprintf("begin %d\nend %d\n", i, i) {
			t.Errorf("run %d: exit %d, stdout %q; want exit %d and its whole output once\nstderr:\n%s", i, code, runs[i].stdout.String(), i%3, runs[i].stderr.String())
		}
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := order(); got != want.String() {
		t.Errorf("the runs started in the order %q; want each once, in the order they queued", strings.ReplaceAll(got, "\n", " "))
	}
	if t.Failed() {
		t.Logf("daemon log:\n%s", e.daemonLog())
	}
}

// TestRunsSurviveDaemonKillConnections: TestRunsSurviveDaemonKill's shape
// with the bound on connections instead of jobs: the world's slice is on
// the shared PostgreSQL and its project allows its jobs one job's
// connections there ([admission] connections = job_connections = 1), so
// one run runs and the others queue for the server's connections, not
// for job places. The daemon killed with SIGKILL, the next one counts the
// command still running for its connections and holds the queued ones
// behind it (before, they were queued again without their servers and as
// many ran as there were job places), then runs them one by one, in
// their order, each once.
func TestRunsSurviveDaemonKillConnections(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	project := runName("rsc") // its slice is on the shared server
	e := newEnv(t, strings.Replace(runStdinConfig, `name = "rin"`, `name = "`+project+`"`, 1)+`
[services.db]
adapter   = "postgres"
admin_url = "`+e2ePostgres+`"

[admission]
connections = 1
job_connections = 1
`)
	e.must("up", "-q", "c1")
	t.Cleanup(func() { e.binky("remove", "--force", "-q", "c1") })
	dir := t.TempDir()
	// A test that fails before the gate opens lets the runs end.
	t.Cleanup(func() { os.WriteFile(filepath.Join(dir, "go"), nil, 0o644) })
	script := `echo "$1" >> "$0/order"; echo "begin $1"; while [ ! -e "$0/go" ]; do sleep 0.05; done; echo "end $1"`
	const n = 5
	runs := make([]*bgRun, n)
	order := func() string { b, _ := os.ReadFile(filepath.Join(dir, "order")); return string(b) }
	for i := range n {
		runs[i] = e.startRunBg("c1", "--", "sh", "-c", script, dir, fmt.Sprint(i))
		if i == 0 {
			waitFor(t, "the first run to start", func() bool { return order() == "0\n" })
			continue
		}
		want := fmt.Sprintf("position %d: connections on postgres://127.0.0.1:5432: 1 held by running jobs + 1 > 1", i)
		waitFor(t, "run "+fmt.Sprint(i)+" queued for the server's connections", func() bool { return strings.Contains(runs[i].stderr.String(), want) })
	}

	kill9Daemon(t, e)

	waitOneRunningRestQueued(t, e, n, order)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)

	var want strings.Builder
	for i := range n {
		<-runs[i].done
		if runs[i].err != nil || runs[i].stdout.String() != fmt.Sprintf("begin %d\nend %d\n", i, i) {
			t.Errorf("run %d: %v, stdout %q; want exit 0 and its whole output once\nstderr:\n%s", i, runs[i].err, runs[i].stdout.String(), runs[i].stderr.String())
		}
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := order(); got != want.String() {
		t.Errorf("the runs started in the order %q; want each once, in the order they queued", strings.ReplaceAll(got, "\n", " "))
	}
	if t.Failed() {
		t.Logf("daemon log:\n%s", e.daemonLog())
	}
}

// waitOneRunningRestQueued waits until the daemon (a new one, after a
// kill) holds one run running and the other n-1 queued, and checks that
// only the first has started (order lists the runs that did).
func waitOneRunningRestQueued(t *testing.T, e *env, n int, order func() string) {
	t.Helper()
	waitFor(t, "the next daemon to hold the running run and queue the rest behind it", func() bool {
		r := e.binky("status", "--json")
		if r.code != 0 {
			return false
		}
		var s struct {
			Pressure jobsJSON `json:"pressure"`
		}
		return jsonUnmarshal(r.stdout, &s) == nil && s.Pressure.JobsRunning == 1 && s.Pressure.JobsQueued == n-1
	})
	if got := order(); got != "0\n" {
		t.Fatalf("before the gate opened, the runs that started: %q; want only the first", got)
	}
}
