//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const isolationConfig = `
[project]
name = "iso"
port_range = PORTRANGE

[services.store]
adapter   = "sqlite"
admin_url = "${env.ISO_ADMIN}"

[services.probe]
cmd     = "exec sleep 600"
restart = "always"

[services.quoted]
cmd = "printf '[%s]\\n' ${env.ISO_VALUE} > ${worktree.path}/quoted.out; exec sleep 600"

[agents]
verify = [
  "printf '%s|%s|%s' \"$BINKY_HOME\" \"$BINKY_TEST_CALLER_ONLY\" \"$BINKY_TEST_DAEMON_ONLY\" > \"$BINKY_WORKTREE_PATH/verify.out\"",
  "printf '[%s]' ${env.ISO_VALUE} > ${worktree.path}/verify-token.out",
]
`

// TestServiceEnvIsTheCallersNotTheDaemons: the daemon is started from a
// shell holding a variable; `up` from another shell without it. The
// service has the caller's variables and not the daemon's, nor BINKY_HOME;
// so does its replacement after a kill -9 of the daemon and of the service
// (restarted by a new daemon from the stored spec). A token value with
// shell metacharacters reaches the service whole. Verify commands get the
// caller's environment and BINKY_HOME; remove resolves ${env.*} from its
// caller.
func TestServiceEnvIsTheCallersNotTheDaemons(t *testing.T) {
	e := newEnv(t, isolationConfig)
	e.extra = []string{"BINKY_TEST_DAEMON_ONLY=leak"}
	e.must("daemon", "start")

	caller := []string{"BINKY_TEST_CALLER_ONLY=mine", "ISO_VALUE=p&?#q", "ISO_ADMIN=sqlite://unused"}
	e.extra = caller
	e.must("up", "-q", "iso1")
	w := e.status().world(t, "iso1")
	pid := w.service(t, "probe").Pid
	checkEnviron(t, "service started by up", pid)
	if got := read(filepath.Join(w.Path, "quoted.out")); got != "[p&?#q]\n" {
		t.Errorf("${env.ISO_VALUE} reached the service as %q; want [p&?#q] (one word, unsplit)", got)
	}

	e.must("verify", "iso1")
	want := e.home + "|mine|"
	if got := read(filepath.Join(w.Path, "verify.out")); got != want {
		t.Errorf("verify saw BINKY_HOME|caller|daemon = %q; want %q", got, want)
	}
	if got := read(filepath.Join(w.Path, "verify-token.out")); got != "[p&?#q]" {
		t.Errorf("a verify command got ${env.ISO_VALUE} as %q; want [p&?#q]", got)
	}

	// kill -9 the daemon; a new one, again from a shell with the daemon-only
	// variable, re-adopts; then the service dies and its restart policy
	// starts it again from the stored spec.
	killDaemon(t, e)
	e.extra = []string{"BINKY_TEST_DAEMON_ONLY=leak-again"}
	e.must("daemon", "start")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 service %d: %v", pid, err)
	}
	newPid := 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s := e.status().world(t, "iso1").service(t, "probe")
		if s.Pid != 0 && s.Pid != pid && s.State == "running" && alive(s.Pid) {
			newPid = s.Pid
			break
		}
	}
	if newPid == 0 {
		t.Fatalf("the killed service was not restarted; status: %+v\ndaemon log:\n%s", e.status().world(t, "iso1"), e.daemonLog())
	}
	checkEnviron(t, "service restarted by a new daemon", newPid)

	// remove calls the adapter, whose admin_url is ${env.ISO_ADMIN}: it
	// resolves from the caller, who has it (the daemon never had it).
	e.extra = caller
	e.must("remove", "--force", "-q", "iso1")
}

// checkEnviron asserts a service process has the caller's variable and
// neither the daemon's nor BINKY_HOME.
func checkEnviron(t *testing.T, what string, pid int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("%s: read environ of %d: %v", what, pid, err)
	}
	env := "\x00" + string(b)
	if !strings.Contains(env, "\x00BINKY_TEST_CALLER_ONLY=mine\x00") {
		t.Errorf("%s (pid %d) lacks the caller's BINKY_TEST_CALLER_ONLY", what, pid)
	}
	if strings.Contains(env, "\x00BINKY_TEST_DAEMON_ONLY=") {
		t.Errorf("%s (pid %d) has the daemon's BINKY_TEST_DAEMON_ONLY", what, pid)
	}
	if strings.Contains(env, "\x00BINKY_HOME=") {
		t.Errorf("%s (pid %d) has BINKY_HOME; only verify commands get it", what, pid)
	}
}

func killDaemon(t *testing.T, e *env) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.home, "daemon.pid"))
	if err != nil {
		t.Fatal(err)
	}
	dpid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(dpid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 daemon %d: %v", dpid, err)
	}
	for i := 0; i < 100 && alive(dpid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}
