//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSecondDaemonRefused: a second daemon for the same BINKY_HOME exits
// non-zero naming the running one's pid, and touches nothing.
func TestSecondDaemonRefused(t *testing.T) {
	e := newEnv(t, "[project]\nname = \"solo\"\nport_range = PORTRANGE\n")
	e.must("daemon", "start")
	pid := strings.TrimSpace(read(filepath.Join(e.home, "daemon.pid")))
	sock, _ := os.Stat(filepath.Join(e.home, "daemon.sock"))
	r := e.binky("daemon", "run")
	if r.code == 0 || !strings.Contains(r.stderr, "pid "+pid) {
		t.Fatalf("second daemon: exit %d, stderr %q; want non-zero naming pid %s", r.code, r.stderr, pid)
	}
	after, err := os.Stat(filepath.Join(e.home, "daemon.sock"))
	if err != nil || !after.ModTime().Equal(sock.ModTime()) {
		t.Errorf("the second daemon touched the socket: %v", err)
	}
	if mode := after.Mode().Perm(); mode != 0o600 {
		t.Errorf("daemon.sock mode %o; want 600", mode)
	}
	e.must("daemon", "status")
}

// TestOtherUserRefused: a caller with another uid cannot use the daemon.
func TestOtherUserRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	e := newEnv(t, "[project]\nname = \"mine\"\nport_range = PORTRANGE\n")
	e.must("daemon", "start")
	// Open the path for the other user so only the socket's own guards
	// stand in its way.
	for d := e.home; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	cmd := exec.Command(filepath.Join(binDir, "binky"), "status")
	cmd.Env = e.environ()
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("status as uid 65534 succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "binky:") || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
		t.Errorf("want one clear error line, got:\n%s", out)
	}
	// And through an open socket mode, peer credentials still refuse it.
	os.Chmod(filepath.Join(e.home, "daemon.sock"), 0o666)
	out, err = cmd2(e).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refused") || !strings.Contains(string(out), strconv.Itoa(65534)) {
		t.Errorf("status as uid 65534 through a 0666 socket: %v\n%s", err, out)
	}
}

func cmd2(e *env) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "binky"), "status")
	cmd.Env = e.environ()
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}

// TestMissingEnvNamesThePlaces: an ${env.NAME} found nowhere fails up,
// naming the variable and the three places looked.
func TestMissingEnvNamesThePlaces(t *testing.T) {
	e := newEnv(t, `
[project]
name = "needy"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
env = { API_KEY = "${env.NEEDY_API_KEY}" }
`)
	r := e.binky("up", "x")
	if r.code == 0 {
		t.Fatal("up with a missing ${env.*} succeeded")
	}
	for _, want := range []string{"NEEDY_API_KEY", "your environment", "env_file"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("error does not mention %q:\n%s", want, r.stderr)
		}
	}
	e.extra = []string{"NEEDY_API_KEY=k3y-value-1234"}
	e.must("up", "x")
}

// TestIdleDaemonTrims: a daemon quiet for BINKY_TRIM_AFTER hands back the
// pages of its binary image it mapped while busy (host/memtrim), and goes on
// serving: its file-backed resident set falls, and status and up still work.
func TestIdleDaemonTrims(t *testing.T) {
	e := newEnv(t, "[project]\nname = \"trim\"\nport_range = PORTRANGE\n\n[services.idle]\ncmd = \"exec sleep 600\"\n")
	e.extra = append(e.extra, "BINKY_TRIM_AFTER=1s")
	e.must("up", "a")
	pid := strings.TrimSpace(strings.SplitN(read(filepath.Join(e.home, "daemon.pid")), "\n", 2)[0])
	rssFile := func() int {
		b, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatalf("daemon %s: %v", pid, err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
				n, _ := strconv.Atoi(f[1])
				return n
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatal("no RssFile in /proc/PID/status on this kernel: CI needs the figure")
		}
		t.Skip("no RssFile in /proc/PID/status on this kernel")
		return 0
	}
	busy := rssFile()
	low := busy
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && low > busy/2; {
		time.Sleep(250 * time.Millisecond)
		low = min(low, rssFile())
	}
	if low > busy/2 {
		t.Fatalf("daemon RssFile %d KiB after up, still %d KiB after 30s quiet with BINKY_TRIM_AFTER=1s", busy, low)
	}
	t.Logf("daemon RssFile %d KiB after up, %d KiB once trimmed", busy, low)
	e.must("status")
	e.must("up", "b")
	if w := e.status().world(t, "b"); w.State != "up" {
		t.Fatalf("world b after the trim: %s", w.State)
	}
}

// TestDeletedSocketComesBack: a daemon.sock deleted, or replaced by a file,
// under a running daemon is made again by that daemon; the next CLI call
// reaches it (the same pid) instead of failing to start a second daemon.
func TestDeletedSocketComesBack(t *testing.T) {
	e := newEnv(t, "[project]\nname = \"sock\"\nport_range = PORTRANGE\n")
	e.must("daemon", "start")
	pidFile := filepath.Join(e.home, "daemon.pid")
	pid := strings.TrimSpace(strings.SplitN(read(pidFile), "\n", 2)[0])
	sock := filepath.Join(e.home, "daemon.sock")
	for _, how := range []string{"deleted", "replaced by a file"} {
		if err := os.Remove(sock); err != nil {
			t.Fatal(err)
		}
		if how == "replaced by a file" {
			if err := os.WriteFile(sock, []byte("not a socket"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r := e.binky("status")
		if r.code != 0 {
			t.Fatalf("socket %s: status exit %d: %s%s", how, r.code, r.stdout, r.stderr)
		}
		if now := strings.TrimSpace(strings.SplitN(read(pidFile), "\n", 2)[0]); now != pid {
			t.Fatalf("socket %s: daemon pid %s, want the running daemon %s", how, now, pid)
		}
		fi, err := os.Stat(sock)
		if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("socket %s: %s is %v (%v); want a 0600 socket again", how, sock, fi, err)
		}
	}
	// Several callers at once find the socket gone: each reaches the one
	// daemon, and no second daemon is left running for this home.
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = e.binky("status").code
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 {
			t.Errorf("concurrent status %d after the socket went: exit %d", i, code)
		}
	}
	out, _ := exec.Command("pgrep", "-f", "--", "--home "+e.home+" daemon run").Output()
	if n := len(strings.Fields(string(out))); n != 1 {
		t.Errorf("%d daemons run for this home after the concurrent calls (pgrep: %q); want 1", n, out)
	}
	if !strings.Contains(e.daemonLog(), "listening on it again") {
		t.Errorf("daemon.log does not say the socket was made again:\n%s", e.daemonLog())
	}
}
