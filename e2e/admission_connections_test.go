//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunConnectionsBound: with [admission] connections = 15 and
// job_connections = 10, a second binky run of a world whose slice is on
// the shared PostgreSQL waits while the first runs (10 + 10 > 15), saying
// which server's connections hold it, and starts when the first ends.
func TestRunConnectionsBound(t *testing.T) {
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	project := runName("admc") // its slice is on the shared server
	e := newAdmEnv(t, strings.Replace(admissionConfig, `name = "adm"`, `name = "`+project+`"`, 1)+`
[services.db]
adapter   = "postgres"
admin_url = "`+e2ePostgres+`"

[admission]
connections = 15
job_connections = 10
`)
	e.must("up", "-q", "c1")
	t.Cleanup(func() { e.binky("remove", "--force", "-q", "c1") })
	gate := filepath.Join(t.TempDir(), "gate")
	first := e.startRun("c1", "sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; echo first done`, gate)
	waitFor(t, "the first run to hold a job place", func() bool { return e.jobs().JobsRunning == 1 })
	second := e.startRun("c1", "echo", "second done")
	want := "position 1: connections on postgres://127.0.0.1:5432: 10 held by running jobs + 10 > 15 (project " + project + ")"
	waitFor(t, "the second run queued by connections", func() bool { return strings.Contains(second.stderr.String(), want) })
	if second.exited() {
		t.Fatalf("the second run finished while the first held the server's connections")
	}
	os.WriteFile(gate, nil, 0o644)
	waitFor(t, "both runs to finish", func() bool { return first.exited() && second.exited() })
	for _, u := range []*bgUp{first, second} {
		if err := <-u.done; err != nil {
			t.Errorf("run: %v\n%s", err, u.stderr.String())
		}
	}
}
