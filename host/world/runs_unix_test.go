//go:build !windows

package world

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
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
	res, err := f.e.Run(ctx, api.RunArgs{Resume: queued.ID}, out)
	if err != nil || res.ExitCode != 4 || out.String() != "out\n" {
		t.Errorf("follow the queued run: %+v, %v, output %q; want exit 4 and its output", res, err, out.String())
	}
	if b, _ := os.ReadFile(ran); string(b) != "once\n" {
		t.Errorf("the queued run ran %q; want once", b)
	}
	_, err = f.e.Run(ctx, api.RunArgs{Resume: gone.ID}, NoProgress{})
	if err == nil || !strings.Contains(err.Error(), "was not started: its world rs/nowhere is gone") {
		t.Errorf("follow the run of a gone world: %v; want it reported as not started, saying why", err)
	}
	res, err = f.e.Run(ctx, api.RunArgs{Resume: killed.ID}, NoProgress{})
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
