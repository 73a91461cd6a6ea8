//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// status says why (issue 26): a running service whose health check starts
// failing turns unhealthy with the probe, its answer and how long, its
// world degraded with the name; it turns back when the check passes. A
// failed migrate is the failed world's reason.

const reasonsWorld = `
[project]
name = "why"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
ports  = ["http"]
health = "http://127.0.0.1:${self.port}/healthz"
`

// worldWhy waits until status shows world wt's service svc in state, and
// returns the world's and the service's reasons. The bound only catches a
// hang; nothing here depends on how fast the daemon notices.
func worldWhy(t *testing.T, e *env, wt, svc, state string) (world, service string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		for _, w := range convStatusOf(t, e).Worlds {
			if w.Worktree != wt {
				continue
			}
			for _, sv := range w.Services {
				if sv.Name == svc && sv.State == state {
					return w.Reason, sv.Reason
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %s never became %s: %+v", svc, wt, state, convStatusOf(t, e).Worlds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStatusSaysWhyHealthFails(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	e := newEnv(t, reasonsWorld)
	e.extra = append(e.extra, "BINKY_HEALTH_EVERY=100ms")
	// The health file is committed, so the world's worktree has it.
	os.WriteFile(filepath.Join(e.repo, "healthz"), []byte("ok\n"), 0o644)
	e.git("add", "healthz")
	e.git("commit", "-q", "-m", "healthz")
	e.must("up", "-q", "w")
	w := e.status().world(t, "w")
	pid := w.service(t, "web").Pid

	// The app stops answering 200: unhealthy, with why, and the world
	// degraded naming it; the process is left running.
	if err := os.Remove(filepath.Join(w.Path, "healthz")); err != nil {
		t.Fatal(err)
	}
	worldReason, reason := worldWhy(t, e, "w", "web", "unhealthy")
	if !strings.HasPrefix(reason, "unhealthy: http://127.0.0.1:") || !strings.Contains(reason, "/healthz") || !strings.Contains(reason, "404") || !strings.Contains(reason, " for ") {
		t.Errorf("reason of the failing service: %q; want the probe, its 404 and for how long", reason)
	}
	if !strings.Contains(worldReason, "web unhealthy") {
		t.Errorf("world reason %q does not name web", worldReason)
	}
	cs := convStatusOf(t, e)
	if cs.Worlds[0].State != "degraded" {
		t.Errorf("world state %q with an unhealthy service; want degraded", cs.Worlds[0].State)
	}
	if got := e.status().world(t, "w").service(t, "web").Pid; got != pid || !alive(pid) {
		t.Errorf("the unhealthy service's process was not left running: pid %d → %d", pid, got)
	}
	text := e.must("status").stdout
	if !strings.Contains(text, "why: web unhealthy") || !strings.Contains(text, "404") {
		t.Errorf("status text does not say why:\n%s", text)
	}
	if len(eventsOf(e, "service_unhealthy")) != 1 {
		t.Errorf("want one service_unhealthy event, got %d", len(eventsOf(e, "service_unhealthy")))
	}

	// It answers again: running, no reason, the world up.
	os.WriteFile(filepath.Join(w.Path, "healthz"), []byte("ok\n"), 0o644)
	if _, reason := worldWhy(t, e, "w", "web", "running"); reason != "" {
		t.Errorf("reason of a running service: %q", reason)
	}
	if cs := convStatusOf(t, e); cs.Worlds[0].State != "up" || cs.Worlds[0].Reason != "" {
		t.Errorf("world after recovery: %+v; want up with no reason", cs.Worlds[0])
	}
}

func TestStatusSaysWhyMigrateFailed(t *testing.T) {
	e := newEnv(t, `
[project]
name = "why"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"
migrate = "echo applying 0042_users >&2; exit 3"

[services.app]
cmd        = "exec sleep 100711"
depends_on = ["db"]
`)
	if r := e.binky("up", "-q", "w"); r.code == 0 {
		t.Fatal("up with a failing migrate succeeded")
	}
	cs := convStatusOf(t, e)
	if len(cs.Worlds) != 1 || cs.Worlds[0].State != "failed" {
		t.Fatalf("status after a failed migrate: %+v; want one failed world", cs.Worlds)
	}
	why := cs.Worlds[0].Reason
	if !strings.Contains(why, "migrate") || !strings.Contains(why, "3") {
		t.Errorf("reason of the failed world: %q; want the migrate and its exit status", why)
	}
	if text := e.must("status").stdout; !strings.Contains(text, "why:") || !strings.Contains(text, "migrate") {
		t.Errorf("status text does not say why:\n%s", text)
	}
}

// TestStatusShowsCrashLines (issue 40): a service that crashes and waits
// in backoff shows its last log lines in status (text and --json) beside
// the reason, with secrets masked: the crash's cause, not only the state.
func TestStatusShowsCrashLines(t *testing.T) {
	e := newEnv(t, `
[project]
name = "crashy"
port_range = PORTRANGE

[services.ok]
cmd = "exec sleep 600"

[services.worker]
cmd = "sleep 1; echo token=${env.CRASH_SECRET}; echo 'invalid boolean value for key METRICS_COLLECTOR'; exit 1"
`)
	const secret = "s3cr3t-crash-value"
	e.extra = append(e.extra, "CRASH_SECRET="+secret)
	e.must("up", "feat/c", "-q")
	deadline := time.Now().Add(60 * time.Second)
	var tail []string
	for tail == nil {
		for _, w := range convStatusOf(t, e).Worlds {
			for _, sv := range w.Services {
				if sv.Name == "worker" && sv.State == "backoff" {
					tail = append([]string{}, sv.LogTail...)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker never went into backoff: %+v", convStatusOf(t, e).Worlds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(strings.Join(tail, "\n"), "invalid boolean value for key METRICS_COLLECTOR") {
		t.Errorf("status --json of a service in backoff: log_tail %q; want the crash's line", tail)
	}
	// The text status prints the lines indented under the world, masked.
	for {
		st := e.must("status").stdout
		if strings.Contains(st, secret) {
			t.Fatalf("status prints a secret:\n%s", st)
		}
		if strings.Contains(st, "worker, last log lines") {
			if !strings.Contains(st, "      invalid boolean value for key METRICS_COLLECTOR") {
				t.Errorf("status text: want the crash's line indented:\n%s", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the worker's log lines:\n%s", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
