//go:build linux

package e2e

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 40 item 8: without cgroups, a child that leaves its service's
// session with setsid and clears its marker survived down and remove, and
// nothing reported it. Both now find it (by its parent), say so and end it.
func TestDownAndRemoveEndEscapeeWithoutCgroups(t *testing.T) {
	needCommand(t, "setsid", "apt-get install util-linux")
	e := newEnv(t, `
[project]
name = "escapee"
port_range = PORTRANGE

[services.spawner]
cmd          = "env -u BINKY_SERVICE setsid sleep 100941 </dev/null >/dev/null 2>&1 & exec sleep 100940"
stop_timeout = "2s"
`)
	e.extra = append(e.extra, "BINKY_NO_CGROUPS=1")
	escapee := func() int {
		t.Helper()
		deadline := time.Now().Add(time.Minute) // only catches a hang
		for time.Now().Before(deadline) {
			// This test's own: another run beside this one has an
			// escapee of the same command line.
			for _, pid := range escapees(e, "100941") {
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				return pid
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the escapee never started")
		return 0
	}
	for _, verb := range []string{"down", "remove"} {
		e.must("up", "-q", "x")
		pid := escapee()
		r := e.must(verb, "x")
		if alive(pid) {
			t.Errorf("%s left pid %d, which cleared its marker in a session of its own, running", verb, pid)
		}
		if !strings.Contains(r.stderr, "cleared its marker: pid "+strconv.Itoa(pid)) {
			t.Errorf("%s did not report the escapee %d:\n%s", verb, pid, r.stderr)
		}
	}
}
