//go:build !windows

package world

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/internal/gittest"
)

// TestResumeRunsReportsEachEnd: what a daemon that starts does with the
// runs a killed one journaled (issue 40 item 4). A queued run of a world
// that exists runs once, and its caller following it gets its output and
// status; a queued run whose world is gone is reported as not started,
// saying why; a run whose command died with no status recorded (killed
// with the daemon) ends as killed (-1), not as running forever.
func TestResumeRunsReportsEachEnd(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, "[project]\nname = \"rs\"\nport_range = PORTRANGE\n\n[services.web]\ncmd = \"exec sleep 600\"\n")
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	rec := f.record()
	ran := filepath.Join(f.hold, "ran")
	queued := &runRecord{ID: "aaaa00000001", Seq: 1, Project: rec.Project, World: rec.Name, State: runQueued,
		Args: api.RunArgs{WorldRef: api.WorldRef{Name: rec.Name, Project: rec.Project, Env: f.env}, Argv: []string{"sh", "-c", `echo once >> "$0"; echo out; exit 4`, ran}}}
	gone := &runRecord{ID: "aaaa00000002", Seq: 2, Project: rec.Project, World: "nowhere", State: runQueued,
		Args: api.RunArgs{WorldRef: api.WorldRef{Name: "nowhere", Project: rec.Project}, Argv: []string{"true"}}}
	killed := &runRecord{ID: "aaaa00000003", Seq: 0, Project: rec.Project, World: rec.Name, State: runRunning, Pid: 1 << 30, Started: time.Now(),
		Args: api.RunArgs{WorldRef: api.WorldRef{Name: rec.Name, Project: rec.Project}, Argv: []string{"true"}}}
	for _, r := range []*runRecord{queued, gone, killed} {
		if err := f.e.saveRun(r); err != nil {
			t.Fatal(err)
		}
	}

	f.e.ResumeRuns(ctx)

	out := &outputs{}
	res, err := f.run(ctx, api.RunArgs{Resume: queued.ID}, out)
	if err != nil || res.ExitCode != 4 || out.String() != "out\n" {
		t.Errorf("follow the queued run: %+v, %v, output %q; want exit 4 and its output", res, err, out.String())
	}
	if b, _ := os.ReadFile(ran); string(b) != "once\n" {
		t.Errorf("the queued run ran %q; want once", b)
	}
	_, err = f.run(ctx, api.RunArgs{Resume: gone.ID}, NoProgress{})
	if err == nil || !strings.Contains(err.Error(), "was not started: its world rs/nowhere is gone") {
		t.Errorf("follow the run of a gone world: %v; want it reported as not started, saying why", err)
	}
	res, err = f.run(ctx, api.RunArgs{Resume: killed.ID}, NoProgress{})
	if err != nil || res.ExitCode != -1 {
		t.Errorf("follow the killed run: %+v, %v; want exit -1", res, err)
	}
}

// outputs collects a run's output.
type outputs struct {
	NoProgress
	b strings.Builder
}

func (o *outputs) Output(_ int, _, data string) { o.b.WriteString(data) }
func (o *outputs) String() string               { return o.b.String() }

// slowReader is a run's caller that takes the output holding tail only
// once let go: a caller still reading a finished command's output.
type slowReader struct {
	NoProgress
	tail string
	let  <-chan struct{}
	mu   sync.Mutex
	b    strings.Builder
}

func (o *slowReader) Output(_ int, _, data string) {
	if strings.Contains(data, o.tail) {
		<-o.let
	}
	o.mu.Lock()
	o.b.WriteString(data)
	o.mu.Unlock()
}

// TestRunHandsItsJobPlaceOnAtItsEnd: with jobs = 1, the run queued behind
// another starts once the first one's command ends, triggered by that
// end: the controller takes no samples on a timer here (its Run is not
// running), and the first run's caller has not even taken its last
// output yet. (Before, the place went back only after the output was
// streamed and the end recorded.)
func TestRunHandsItsJobPlaceOnAtItsEnd(t *testing.T) {
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, "[project]\nname = \"hq\"\nport_range = PORTRANGE\n\n[admission]\njobs = 1\n\n[services.web]\ncmd = \"exec sleep 600\"\n")
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	adm := admission.New(admission.Options{
		Source:   fixedSource{},
		Limits:   func() admission.Limits { return admission.Limits{} },
		Interval: time.Hour,
	})
	f.e.admOff = false
	f.e.StartAdmission(ctx, adm, nil)

	fifo := func(name string) string {
		p := filepath.Join(f.hold, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	aUp, aGo, bUp := fifo("a-up"), fifo("a-go"), fifo("b-up")
	// Each command says it runs by opening a fifo the test reads.
	let := make(chan struct{})
	first := &slowReader{tail: "a-tail", let: let}
	type ran struct {
		res *api.RunResult
		err error
	}
	aDone, bDone := make(chan ran, 1), make(chan ran, 1)
	go func() {
		res, err := f.run(ctx, api.RunArgs{WorldRef: f.ref(), Argv: []string{"sh", "-c", `echo > "$0"; read x < "$1"; echo a-tail`, aUp, aGo}}, first)
		aDone <- ran{res, err}
	}()
	readFifo(t, aUp)
	go func() {
		res, err := f.run(ctx, api.RunArgs{WorldRef: f.ref(), Argv: []string{"sh", "-c", `echo b-out; echo > "$0"`, bUp}}, &outputs{})
		bDone <- ran{res, err}
	}()
	f.waitFor("the second run queued behind the first", func() bool { return len(adm.Jobs().Queue) == 1 })

	if err := os.WriteFile(aGo, []byte("\n"), 0o600); err != nil { // the first command ends
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() { readFifo(t, bUp); close(started) }()
	select {
	case <-started:
	case <-time.After(waitBound): // only catches a hang
		close(let)
		t.Fatalf("the second run never started while the first's caller was still reading: %+v", adm.Jobs())
	}
	close(let)
	for name, c := range map[string]chan ran{"first": aDone, "second": bDone} {
		if r := <-c; r.err != nil || r.res.ExitCode != 0 {
			t.Errorf("%s run: %+v, %v; want exit 0", name, r.res, r.err)
		}
	}
	if !strings.Contains(first.b.String(), "a-tail") {
		t.Errorf("the first run's caller got %q; want its whole output", first.b.String())
	}
	if s := adm.Jobs(); s.Running != 0 || len(s.Queue) != 0 {
		t.Errorf("jobs after both: %+v; want none", s)
	}
}

// readFifo opens the fifo p for reading (it blocks until a command opens
// it to write) and reads it to its end.
func readFifo(t *testing.T, p string) {
	t.Helper()
	if _, err := os.ReadFile(p); err != nil {
		t.Error(err)
	}
}

// fixedSource is admission's pressure source with nothing measured: no
// RAM or disk bound applies.
type fixedSource struct{}

func (fixedSource) Sample(context.Context) (admission.Sample, error) { return admission.Sample{}, nil }

// connWorld is a world with a slice (on the fake adapter's server) whose
// project bounds its jobs' connections there to one job's.
const connWorld = `[project]
name = "cb"
port_range = PORTRANGE

[admission]
connections = 1
job_connections = 1

[services.db]
adapter = "fake"

[services.web]
cmd = "exec sleep 600"
`

// gatedRun is a command for a journaled run: it says it started by
// writing its name to the fifo $0/up (the test reads it), then waits until
// the test writes its fifo $0/go-<name>, and records that it ran in
// $0/order.
const gatedRun = `echo "$1" >> "$0/order"; echo "$1" > "$0/up"; read x < "$0/go-$1"; echo "end $1"`

// connFixture brings up connWorld with admission off, and returns it with
// the server its slice is counted on and a directory with the fifo "up".
func connFixture(t *testing.T) (*fixture, string, string) {
	t.Helper()
	gittest.Isolate(t)
	ctx := context.Background()
	f := newFixture(t, connWorld)
	if _, err := f.up(ctx, f.upArgs()); err != nil {
		t.Fatalf("up: %v\n%s", err, f.said)
	}
	servers := f.e.jobServers(ctx, f.record())
	if len(servers) != 1 {
		t.Fatalf("the world's job servers: %q; want its slice's one", servers)
	}
	dir := filepath.Join(f.hold, "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "up"))
	// Whatever a failed test left blocked on its fifos ends with it.
	rec := f.record()
	t.Cleanup(func() {
		supervisor.EndMarked(supervisor.WorldMarker(f.e.homeID, rec.Project, rec.Name)+runService+"@", syscall.SIGKILL, 0)
	})
	return f, servers[0], dir
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startAdmission hands f's engine an admission controller that bounds
// nothing but the world's connections (10 job places, no RAM sample, no
// ticks), which takes over the journal (ResumeRuns) as a daemon that
// starts does; the runs it resumes stop with the test.
func startAdmission(t *testing.T, f *fixture) *admission.Controller {
	t.Helper()
	adm := admission.New(admission.Options{
		Source:   fixedSource{},
		Limits:   func() admission.Limits { return admission.Limits{} },
		Interval: time.Hour,
		Jobs:     10,
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.e.admOff = false
	f.e.StartAdmission(ctx, adm, nil)
	return adm
}

// gate lets journaled run name (gatedRun) end.
func gate(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go-"+name), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startedRun reads, from the fifo up, the name of the gated run that
// started next (it blocks until one does).
func startedRun(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "up"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestResumedRunsKeepConnectionsBound: a daemon that takes over a journal
// of queued runs of a world whose project allows its jobs one job's
// connections on its server runs them one at a time, in their order (the
// admission bug: they were queued again without their servers, and all
// ran at once). Half the records carry what they were counted for when
// they first queued; half were written by an older binky without it, and
// are counted as a new run of the world would be. Each run is let go only
// once the test saw it alone running: no timing.
func TestResumedRunsKeepConnectionsBound(t *testing.T) {
	f, server, dir := connFixture(t)
	ctx := context.Background()
	rec := f.record()
	const n = 4
	for i := range n {
		name := strconv.Itoa(i)
		mkfifo(t, filepath.Join(dir, "go-"+name))
		r := &runRecord{ID: fmt.Sprintf("cccc0000000%d", i), Seq: int64(i + 1), Project: rec.Project, World: rec.Name, State: runQueued,
			Args: api.RunArgs{WorldRef: api.WorldRef{Name: rec.Name, Project: rec.Project, Env: f.env}, Argv: []string{"sh", "-c", gatedRun, dir, name}}}
		if i%2 == 0 {
			r.Limits = &admission.JobLimits{Servers: []string{server}, Connections: 1, ConnBound: 1}
		}
		if err := f.e.saveRun(r); err != nil {
			t.Fatal(err)
		}
	}

	adm := startAdmission(t, f)

	for i := range n {
		name := strconv.Itoa(i)
		if got := startedRun(t, dir); got != name {
			t.Fatalf("run %s started; want %s, in the order they queued", got, name)
		}
		s := adm.Jobs()
		if s.Running != 1 || len(s.Queue) != n-1-i {
			t.Fatalf("while run %d runs: %+v; want it alone running and %d queued", i, s, n-1-i)
		}
		if i < n-1 {
			want := "connections on " + server + ": 1 held by running jobs + 1 > 1 (project cb)"
			if s.Queue[0].Reason != want {
				t.Errorf("the next run waits for %q; want %q", s.Queue[0].Reason, want)
			}
		}
		gate(t, dir, name)
	}
	for i := range n {
		out := &outputs{}
		res, err := f.run(ctx, api.RunArgs{Resume: fmt.Sprintf("cccc0000000%d", i)}, out)
		if err != nil || res.ExitCode != 0 || out.String() != fmt.Sprintf("end %d\n", i) {
			t.Errorf("follow run %d: %+v, %v, output %q; want exit 0 and its output", i, res, err, out.String())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "order")); string(b) != "0\n1\n2\n3\n" {
		t.Errorf("the runs ran %q; want each once, in order", b)
	}
	f.waitFor("every run to give its job place back", func() bool {
		s := adm.Jobs()
		return s.Running == 0 && len(s.Queue) == 0
	})
}

// TestAdoptedRunHoldsItsConnections: a command a killed daemon left
// running is counted by the daemon that takes it over, for its
// connections too, until it ends: a queued run of the same world, whose
// project allows one job's connections on the server, waits for it and
// starts once it ends (learnt from its exit, with no caller following it).
// The running record is one an older binky wrote (no limits recorded).
func TestAdoptedRunHoldsItsConnections(t *testing.T) {
	f, server, dir := connFixture(t)
	ctx := context.Background()
	rec := f.record()
	for _, name := range []string{"running", "queued"} {
		mkfifo(t, filepath.Join(dir, "go-"+name))
	}
	running := &runRecord{ID: "dddd00000001", Seq: 1, Project: rec.Project, World: rec.Name, State: runRunning, Started: time.Now(),
		Args: api.RunArgs{WorldRef: api.WorldRef{Name: rec.Name, Project: rec.Project, Env: f.env}, Argv: []string{"sh", "-c", gatedRun, dir, "running"}}}
	if err := f.e.saveRun(running); err != nil {
		t.Fatal(err)
	}
	// Started as runJournaled starts it: detached, marked, its end
	// recorded by the wrapper.
	env := []string{"PATH=" + os.Getenv("PATH"), supervisor.MarkerEnv + "=" + f.e.runMarker(running)}
	pid, _, err := startRun(rec.Path, env, running.Args.Argv, f.e.exitPath(running.ID), filepath.Join(f.e.runDir(running.ID), "stdout"), filepath.Join(f.e.runDir(running.ID), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	running.Pid = pid
	if err := f.e.saveRun(running); err != nil {
		t.Fatal(err)
	}
	if got := startedRun(t, dir); got != "running" {
		t.Fatalf("started %q; want the running run", got)
	}
	queued := &runRecord{ID: "dddd00000002", Seq: 2, Project: rec.Project, World: rec.Name, State: runQueued,
		Limits: &admission.JobLimits{Servers: []string{server}, Connections: 1, ConnBound: 1},
		Args:   api.RunArgs{WorldRef: api.WorldRef{Name: rec.Name, Project: rec.Project, Env: f.env}, Argv: []string{"sh", "-c", gatedRun, dir, "queued"}}}
	if err := f.e.saveRun(queued); err != nil {
		t.Fatal(err)
	}

	adm := startAdmission(t, f)

	s := adm.Jobs()
	want := "connections on " + server + ": 1 held by running jobs + 1 > 1 (project cb)"
	if s.Running != 1 || len(s.Queue) != 1 || s.Queue[0].Reason != want {
		t.Fatalf("with the adopted run running: %+v; want it running and the other queued for %q", s, want)
	}
	gate(t, dir, "running")
	if got := startedRun(t, dir); got != "queued" {
		t.Fatalf("started %q; want the queued run once the adopted one ended", got)
	}
	if s := adm.Jobs(); s.Running != 1 || len(s.Queue) != 0 {
		t.Errorf("with the queued run running: %+v; want it alone", s)
	}
	gate(t, dir, "queued")
	for _, r := range []*runRecord{running, queued} {
		out := &outputs{}
		res, err := f.run(ctx, api.RunArgs{Resume: r.ID}, out)
		if err != nil || res.ExitCode != 0 || !strings.HasSuffix(out.String(), "end "+r.Args.Argv[4]+"\n") {
			t.Errorf("follow run %s: %+v, %v, output %q; want exit 0 and its end", r.ID, res, err, out.String())
		}
	}
	// The place goes back when the engine reaps the command, which a
	// follower that read its recorded end may see first.
	f.waitFor("both runs to give their job places back", func() bool {
		s := adm.Jobs()
		return s.Running == 0 && len(s.Queue) == 0
	})
}
