//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"testing"
	"time"
)

// TestKill9DaemonReadoptsWorlds: kill -9 of the daemon while three worlds
// run, then any CLI call: the same pids, no duplicate processes, the same
// ports, and logs still growing.
func TestKill9DaemonReadoptsWorlds(t *testing.T) {
	e := newEnv(t, `
[project]
name = "tough"
port_range = PORTRANGE

[services.ticker]
cmd = "while true; do echo tick; sleep 0.1; done"
ports = ["http"]
`)
	for _, b := range []string{"w1", "w2", "w3"} {
		e.must("up", "-q", b)
	}
	before := e.status()
	pidFile, err := os.ReadFile(filepath.Join(e.home, "daemon.pid"))
	if err != nil {
		t.Fatal(err)
	}
	dpid, _ := strconv.Atoi(strings.TrimSpace(string(pidFile)))
	if err := syscall.Kill(dpid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 daemon %d: %v", dpid, err)
	}
	for i := 0; i < 100 && syscall.Kill(dpid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	after := e.status() // starts a new daemon, which re-adopts
	for _, wb := range before.Worlds {
		wa := after.world(t, wb.Worktree)
		if wa.Ports != wb.Ports {
			t.Errorf("%s: ports %v after; %v before", wb.Worktree, wa.Ports, wb.Ports)
		}
		sb, sa := wb.service(t, "ticker"), wa.service(t, "ticker")
		if sa.Pid != sb.Pid || sa.Pid == 0 {
			t.Errorf("%s: ticker pid %d after; %d before", wb.Worktree, sa.Pid, sb.Pid)
		}
		if sa.State != "running" {
			t.Errorf("%s: ticker %s after re-adoption; want running", wb.Worktree, sa.State)
		}
		if n := countMarked(homeIDOf(e.home) + "/" + e.project + "/" + wb.Worktree + "/ticker"); n != 1 {
			t.Errorf("%s: %d processes run the ticker; want 1 (no duplicates)", wb.Worktree, n)
		}
		log := filepath.Join(e.home, "logs", e.project, wb.Worktree, "ticker.log")
		s1 := size(log)
		waitFor(t, wb.Worktree+"'s ticker log to grow after re-adoption", func() bool { return size(log) > s1 })
	}
	// The re-adopted world stops for real.
	pid := after.world(t, "w1").service(t, "ticker").Pid
	e.must("down", "w1")
	if alive(pid) {
		t.Errorf("re-adopted ticker %d survived down; status: %+v", pid, e.status().world(t, "w1"))
	}
}

// alive reports whether pid runs; a zombie (which this machine's init may
// be slow to reap) is dead.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countMarked counts live processes whose environment carries the
// supervisor's marker for one service (the shell loop's own children
// excluded: only session leaders count).
func countMarked(marker string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !strings.Contains(string(env), "BINKY_SERVICE="+marker+"\x00") {
			continue
		}
		if sid, err := unix.Getsid(pid); err == nil && sid == pid {
			n++
		}
	}
	return n
}

// TestSecretsNeverWritten: a value resolved from ${env.*} never appears in
// what Binky writes — events, the daemon log, status, error messages — even
// when a service prints it or a failure quotes it.
func TestSecretsNeverWritten(t *testing.T) {
	const secret = "pa55 w0rd/xyzzy?"
	e := newEnv(t, `
[project]
name = "hush"
port_range = PORTRANGE

[services.leaky]
cmd = "echo connecting with $TOKEN; python3 -c 'import os, urllib.parse as u; print(u.quote_plus(os.environ[\"TOKEN\"]))'; exit 3"
env = { TOKEN = "${env.HUSH_TOKEN}" }
restart = "never"
ports = ["http"]
health = { tcp = "127.0.0.1:${self.port}", timeout = "2s", interval = "100ms" }
`)
	e.extra = []string{"HUSH_TOKEN=" + secret}
	r := e.binky("up", "hush")
	if r.code == 0 {
		t.Fatalf("up of a service that exits succeeded")
	}
	st := e.binky("status", "--json")
	for name, text := range map[string]string{
		"up stderr":  r.stderr,
		"up stdout":  r.stdout,
		"status":     st.stdout,
		"events.log": read(filepath.Join(e.home, "events.log")),
		"daemon.log": read(filepath.Join(e.home, "daemon.log")),
	} {
		for _, form := range []string{secret, url.QueryEscape(secret)} {
			if strings.Contains(text, form) {
				t.Errorf("%s contains the secret %q:\n%s", name, form, text)
			}
		}
	}
	if !strings.Contains(r.stderr, "connecting with ***") {
		t.Errorf("the failure should quote the log tail, redacted:\n%s", r.stderr)
	}
	var events []map[string]any
	for _, line := range strings.Split(read(filepath.Join(e.home, "events.log")), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			events = append(events, ev)
		}
	}
	if len(events) == 0 {
		t.Fatal("no events written")
	}
}
