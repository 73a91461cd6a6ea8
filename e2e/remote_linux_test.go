//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/binkyhq/binky/host/remote"
)

// remoteWorld is the project a host runs in these tests: one web service
// and verify checks.
const remoteWorld = `
[project]
name = "far"
port_range = PORTRANGE

[services.web]
cmd    = "echo web says hello; exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url    = "web"
health = "http://127.0.0.1:${self.port}/"

[agents]
expose = ["web"]
verify = ["test -n \"$BINKY_WEB_URL\""]
`

// remoteEnv is a local env and a host it drives as "box": hosts.toml in
// the local home names the host, its own BINKY_HOME (hostHome) and bin/'s
// binky.
type remoteEnv struct {
	*env
	host     *sshHost
	hostHome string
}

func newRemoteEnv(t *testing.T) *remoteEnv {
	t.Helper()
	needCommand(t, "python3", "apt-get install python3")
	h := newSSHHost(t)
	e := newEnv(t, remoteWorld)
	cfg := h.client(filepath.Dir(e.home), "root", nil)
	r := &remoteEnv{env: e, host: h, hostHome: filepath.Join(h.dir, "binky-home")}
	e.must("host", "add", "box", "root@"+h.addr+":22", "--ssh-config", cfg, "--remote-home", r.hostHome, "--binky", filepath.Join(binDir, "binky"))
	t.Cleanup(r.cleanupHost)
	return r
}

// onHost runs binky on the host itself (in the namespace, its home).
func (r *remoteEnv) onHost(args ...string) (string, error) {
	return r.host.exec(append([]string{filepath.Join(binDir, "binky"), "--home", r.hostHome}, args...)...)
}

// cleanupHost removes the host's worlds and stops its daemon, over the
// host's own binky (the namespace's teardown kills what is left).
func (r *remoteEnv) cleanupHost() {
	out, _ := r.onHost("status", "--json")
	var s statusJSON
	if json.Unmarshal([]byte(out), &s) == nil {
		for _, w := range s.Worlds {
			r.onHost("remove", "--force", "-q", "--project", w.Project, w.Worktree)
		}
	}
	r.onHost("daemon", "stop")
}

// hostRepo makes a clone of the project on the host (the same
// filesystem), with the test's port range.
func (r *remoteEnv) hostRepo() string {
	dir := filepath.Join(r.host.dir, "src", "far")
	os.MkdirAll(dir, 0o755)
	config := r.render(strings.ReplaceAll(remoteWorld, "PORTRANGE", fmt.Sprintf("[%d, %d]", r.rng[0]+30, r.rng[1])))
	os.WriteFile(filepath.Join(dir, "binky.toml"), []byte(config), 0o644)
	r.commitNew(dir)
	return dir
}

// remoteStatus is `binky --host box status --json`.
func (r *remoteEnv) remoteStatus() statusJSON {
	r.t.Helper()
	res := r.must("--host", "box", "status", "--json")
	var s statusJSON
	if err := json.Unmarshal([]byte(res.stdout), &s); err != nil {
		r.t.Fatalf("status --json over ssh: %v\n%s", err, res.stdout)
	}
	return s
}

// TestRemoteHost drives a host in a namespace of its own over real
// OpenSSH: host check, a world up from the host's clone (--repo) and from
// the local clone (pushed), status/env/run/verify/logs with their exit
// codes, the connection killed under logs -f and recovered, an
// incompatible host binky refused, and remove leaving nothing running on
// the host.
func TestRemoteHost(t *testing.T) {
	r := newRemoteEnv(t)

	// host check, step by step, and as JSON.
	res := r.must("host", "check", "box")
	for _, want := range []string{"ok   ssh", "ok   binky", "ok   daemon"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("host check lacks %q:\n%s", want, res.stdout)
		}
	}
	var chk struct {
		OK    bool `json:"ok"`
		Steps []struct {
			Step string `json:"step"`
			OK   bool   `json:"ok"`
		} `json:"steps"`
	}
	res = r.must("host", "check", "box", "--json")
	if json.Unmarshal([]byte(res.stdout), &chk) != nil || !chk.OK || len(chk.Steps) != 3 {
		t.Errorf("host check --json: %s", res.stdout)
	}
	// A host ssh cannot reach: the first step fails with ssh's words and
	// what is missing; the others are not tried.
	cfg0 := filepath.Join(filepath.Dir(r.home), "ssh_config")
	r.must("host", "add", "nowhere", "root@"+r.host.here+":22", "--ssh-config", cfg0)
	res = r.binky("host", "check", "nowhere")
	if res.code != 1 || !strings.Contains(res.stdout, "FAIL ssh") || !strings.Contains(res.stdout, "refused") || !strings.Contains(res.stdout, "missing:") || strings.Contains(res.stdout, "ok  ") || strings.Count(res.stdout, "FAIL") != 1 {
		t.Errorf("host check of an unreachable host: exit %d\n%s", res.code, res.stdout)
	}
	if res := r.binky("--host", "nowhere", "status"); res.code == 0 || !strings.Contains(res.stderr, "refused") {
		t.Errorf("status on an unreachable host: exit %d\n%s", res.code, res.stderr)
	}
	r.must("host", "remove", "nowhere")
	// A host whose daemon cannot start: the daemon step says why.
	r.must("host", "add", "nohome", "root@"+r.host.addr, "--ssh-config", cfg0, "--remote-home", "/proc/binky-cannot", "--binky", filepath.Join(binDir, "binky"))
	res = r.binky("host", "check", "nohome")
	if res.code != 1 || !strings.Contains(res.stdout, "ok   binky") || !strings.Contains(res.stdout, "FAIL daemon") || !strings.Contains(res.stdout, "/proc/binky-cannot") {
		t.Errorf("host check of a host whose daemon cannot start: exit %d\n%s", res.code, res.stdout)
	}
	r.must("host", "remove", "nohome")
	if res := r.must("host", "list", "--json"); !strings.Contains(res.stdout, `"name":"box"`) {
		t.Errorf("host list --json: %s", res.stdout)
	}

	// A world of the host's own clone.
	repo := r.hostRepo()
	r.must("--host", "box", "up", "-q", "feat", "--repo", repo)
	w := r.remoteStatus().world(t, "feat")
	if w.State != "up" || !strings.HasPrefix(w.Path, filepath.Join(r.host.dir, "src")) {
		t.Fatalf("remote world: %+v", w)
	}
	web := w.service(t, "web")
	// Its port is the host's loopback, not this machine's.
	if out, err := exec.Command("curl", "-s", "-m", "2", fmt.Sprintf("http://127.0.0.1:%d/", web.Port)).CombinedOutput(); err == nil {
		t.Errorf("the host's web port %d answers on this machine's loopback: %s", web.Port, out)
	}
	if out, err := r.host.exec("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", fmt.Sprintf("http://127.0.0.1:%d/", web.Port)); err != nil || out != "200" {
		t.Errorf("web on the host's loopback: %v %s", err, out)
	}
	// A direct-tcpip stream through the same connection reaches it.
	if got := fetchOverSSH(t, r, fmt.Sprintf("127.0.0.1:%d", web.Port)); !strings.HasPrefix(got, "HTTP/1.0 200") && !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Errorf("GET through remote.DialTCP: %q", got)
	}
	// BINKY_HOST works as --host does.
	r.extra = []string{"BINKY_HOST=box"}
	if res := r.must("env", "feat"); !strings.Contains(res.stdout, "web") {
		t.Errorf("BINKY_HOST=box env feat:\n%s", res.stdout)
	}
	r.extra = nil
	// run: exit codes and stdin cross the road.
	if res := r.binky("--host", "box", "run", "feat", "--", "sh", "-c", "exit 7"); res.code != 7 {
		t.Errorf("run exit 7 over ssh: got %d\n%s", res.code, res.stderr)
	}
	cmd := exec.Command(filepath.Join(binDir, "binky"), "--host", "box", "run", "-i", "feat", "--", "sh", "-c", "read x; echo got $x")
	cmd.Env, cmd.Dir, cmd.Stdin = r.environ(), r.repo, strings.NewReader("apples\n")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "got apples") {
		t.Errorf("run with stdin over ssh: %v\n%s", err, out)
	}
	if res := r.binky("--host", "box", "verify", "feat"); res.code != 0 {
		t.Errorf("verify over ssh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := r.binky("--host", "box", "env", "nosuch"); res.code == 0 {
		t.Errorf("env of a missing world over ssh exited 0")
	}

	// The other verbs behave as on the host, exit status included.
	r.must("--host", "box", "restart", "-q", "feat")
	if res := r.binky("--host", "box", "reset", "-q", "feat"); res.code != 1 || !strings.Contains(res.stderr, "no adapter services") {
		t.Errorf("reset of a world without slices over ssh: exit %d\n%s", res.code, res.stderr)
	}
	r.must("--host", "box", "golden", "list")
	dr := r.binky("--host", "box", "doctor")
	if out, err := r.onHost("doctor"); (err == nil) != (dr.code == 0) {
		t.Errorf("doctor over ssh exits %d; on the host: %v\n%s", dr.code, err, out)
	}

	// logs -f, then the ssh connection killed under it, then recovery.
	logs := exec.Command(filepath.Join(binDir, "binky"), "--host", "box", "logs", "-f", "feat")
	logs.Env, logs.Dir = r.environ(), r.repo
	pipe, _ := logs.StdoutPipe()
	var logErr strings.Builder
	logs.Stderr = &logErr
	if err := logs.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	seen := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "web says hello") {
			seen = true
			break
		}
	}
	if !seen {
		t.Fatalf("logs -f over ssh never showed web's line; stderr: %s", logErr.String())
	}
	// The sshd child serving this connection dies: the road is cut.
	killSSHSessions(t, r.host)
	done := make(chan error, 1)
	go func() { done <- logs.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("logs -f ended 0 when its connection was cut")
		}
	case <-time.After(60 * time.Second):
		logs.Process.Kill()
		t.Fatalf("logs -f did not end within 60s of its connection being cut")
	}
	if !strings.Contains(logErr.String(), "box") {
		t.Errorf("logs -f's error does not name the host: %s", logErr.String())
	}
	if w := r.remoteStatus().world(t, "feat"); w.State != "up" {
		t.Errorf("after the cut, the world is %s", w.State)
	}

	// A world from the local clone: pushed over the same road.
	near := r.render(strings.ReplaceAll(strings.ReplaceAll(remoteWorld, "PORTRANGE", fmt.Sprintf("[%d, %d]", r.rng[0], r.rng[0]+29)), `"far"`, `"near"`))
	os.WriteFile(filepath.Join(r.repo, "binky.toml"), []byte(near), 0o644)
	r.git("commit", "-q", "-am", "ports")
	r.git("checkout", "-q", "-b", "pushed")
	os.WriteFile(filepath.Join(r.repo, "dirty.txt"), []byte("x"), 0o644)
	r.git("add", "dirty.txt")
	if res := r.binky("--host", "box", "up", "-q"); res.code == 0 || !strings.Contains(res.stderr, "uncommitted changes") {
		t.Errorf("up with uncommitted changes: exit %d\n%s", res.code, res.stderr)
	}
	r.git("commit", "-q", "-m", "dirty")
	r.must("--host", "box", "up", "-q")
	hosts := read(filepath.Join(r.home, "hosts.toml"))
	if !strings.Contains(hosts, `repos`) || !strings.Contains(hosts, `"`+runName("near")+`"`) {
		t.Errorf("hosts.toml does not record the clone:\n%s", hosts)
	}
	pw := r.remoteStatus().world(t, "pushed")
	if pw.State != "up" {
		t.Errorf("pushed world: %+v", pw)
	}

	// An incompatible host binky is refused, naming both versions.
	fake := filepath.Join(r.host.dir, "old-binky")
	os.WriteFile(fake, []byte("#!/bin/sh\ncase \"$*\" in *--version*) echo 'binky 0.0.1-old (fake)'; exit 0;; esac\necho 'binky-remote wire=999 version=binky 0.0.1-old (fake)'\nexec sleep 30\n"), 0o755)
	cfg := filepath.Join(filepath.Dir(r.home), "ssh_config")
	r.must("host", "add", "old", "root@"+r.host.addr, "--ssh-config", cfg, "--binky", fake)
	res = r.binky("--host", "old", "status")
	if res.code == 0 || !strings.Contains(res.stderr, "binky 0.0.1-old") || !strings.Contains(res.stderr, "wire 999") || !strings.Contains(res.stderr, "binky dev") && !strings.Contains(res.stderr, "(wire 1)") {
		t.Errorf("an incompatible host: exit %d\n%s", res.code, res.stderr)
	}
	if res := r.binky("host", "check", "old"); res.code == 0 || !strings.Contains(res.stdout, "FAIL daemon") {
		t.Errorf("host check of an incompatible host: exit %d\n%s", res.code, res.stdout)
	}

	// remove leaves nothing of the worlds running on the host.
	pids := []int{web.Pid, pw.service(t, "web").Pid}
	r.must("--host", "box", "down", "-q", "feat")
	r.must("--host", "box", "remove", "-q", "--force", "feat")
	r.must("--host", "box", "remove", "-q", "--force", "pushed")
	if s := r.remoteStatus(); len(s.Worlds) != 0 {
		t.Errorf("worlds left on the host: %+v", s.Worlds)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("web (pid %d) still runs on the host after remove", pid)
		}
	}
}

// killSSHSessions kills sshd's per-connection children in the namespace
// (not the listener): every connection to the host drops.
func killSSHSessions(t *testing.T, h *sshHost) {
	t.Helper()
	listener := h.sshd.Process.Pid
	for _, p := range h.pids() {
		comm := strings.TrimSpace(read("/proc/" + p + "/comm"))
		ppid := ""
		if st := read("/proc/" + p + "/stat"); st != "" {
			if i := strings.LastIndexByte(st, ')'); i > 0 {
				if f := strings.Fields(st[i+1:]); len(f) > 1 {
					ppid = f[1]
				}
			}
		}
		if comm == "sshd" && p != fmt.Sprint(listener) && ppid != "" {
			exec.Command("kill", "-KILL", p).Run()
		}
	}
}

// TestRemoteOverhead measures one verb (status --json) over ssh, on the
// shared connection, against the same verb run on the host, with what
// the difference is made of: a bare ssh session on binky's own master
// (ssh true), and the account's shell start-up on the host (sshd runs
// every command through it; Debian's bash reads ~/.bashrc for it). It
// measures twice: as root (this machine's account, with its own
// ~/.bashrc) and as a throw-away account whose shell is /bin/sh. 20 runs
// of each, interleaved, medians, with the load average before and after;
// logged, never asserted on time. What it asserts: every verb used the
// one master (its pid is the same after the runs as before).
func TestRemoteOverhead(t *testing.T) {
	if os.Getenv("BINKY_MEASURE_REMOTE") == "" {
		t.Skip("a measurement: BINKY_MEASURE_REMOTE=1 runs it")
	}
	r := newRemoteEnv(t)
	bin := filepath.Join(binDir, "binky")

	// A second host entry: the same machine as a throw-away account whose
	// shell reads no start-up file.
	u := newUnixUser(t)
	if out, err := exec.Command("usermod", "-p", "*", u.name).CombinedOutput(); err != nil {
		t.Fatalf("usermod: %v\n%s", err, out)
	}
	plainDir := filepath.Join(filepath.Dir(r.home), "plain-ssh")
	os.MkdirAll(plainDir, 0o700)
	plainCfg := r.host.client(plainDir, u.name, nil)
	plainHome := filepath.Join(u.base, "host-home")
	r.must("host", "add", "plain", u.name+"@"+r.host.addr, "--ssh-config", plainCfg, "--remote-home", plainHome, "--binky", bin)
	t.Cleanup(func() { r.host.exec("runuser", "-u", u.name, "--", bin, "--home", plainHome, "daemon", "stop") })

	rootShell := loginShell(t, "root")
	type account struct {
		host, user, home, shell string
		over, on, ssh, shellUp  []time.Duration
	}
	accounts := []*account{
		{host: "box", user: "root", home: r.hostHome, shell: rootShell},
		{host: "plain", user: u.name, home: plainHome, shell: "/bin/sh"},
	}
	timed := func(into *[]time.Duration, what string, cmd *exec.Cmd) {
		t.Helper()
		s := time.Now()
		out, err := cmd.CombinedOutput()
		*into = append(*into, time.Since(s))
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
	}
	binky := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = r.environ(), r.repo
		return cmd
	}
	masters := map[string]string{}
	for _, a := range accounts {
		r.must("--host", a.host, "status", "--json") // the master, and the host's daemon
		masters[a.host] = masterPid(t, r, a.host)
	}
	loadBefore := strings.TrimSpace(read("/proc/loadavg"))
	for range 20 {
		for _, a := range accounts {
			timed(&a.over, "status over ssh", binky("--host", a.host, "status", "--json"))
			timed(&a.on, "status on the host", exec.Command("ip", "netns", "exec", r.host.ns, "runuser", "-u", a.user, "--", bin, "--home", a.home, "status", "--json"))
			argv, err := hostCommand(r, a.host, "true")
			if err != nil {
				t.Fatal(err)
			}
			timed(&a.ssh, "ssh true", exec.Command(argv[0], argv[1:]...))
			// What sshd runs: the login shell, -c, with SSH_CLIENT set
			// and nothing else inherited (bash reads ~/.bashrc then).
			timed(&a.shellUp, "the shell's start-up", exec.Command("ip", "netns", "exec", r.host.ns, "runuser", "-u", a.user, "--",
				"env", "-i", "HOME="+homeOf(t, a.user), "PATH=/usr/bin:/bin", "SSH_CLIENT="+r.host.here+" 50000 22", a.shell, "-c", "true"))
		}
	}
	loadAfter := strings.TrimSpace(read("/proc/loadavg"))
	for _, a := range accounts {
		if got := masterPid(t, r, a.host); got != masters[a.host] {
			t.Errorf("host %s: the master was %s before the runs and %s after: verbs did not share one connection", a.host, masters[a.host], got)
		}
		t.Logf("%s (%s, shell %s): status --json over ssh %v, on the host %v; a bare ssh true on binky's master %v; the shell's start-up on the host %v",
			a.host, a.user, a.shell, median(a.over), median(a.on), median(a.ssh), median(a.shellUp))
	}
	t.Logf("medians of 20, interleaved; load average before: %s; after: %s; %d cores", loadBefore, loadAfter, runtime.NumCPU())
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2].Round(time.Millisecond / 10)
}

// hostCommand is the ssh argv binky uses for the host name of r's home,
// running remote there.
func hostCommand(r *remoteEnv, name string, remoteArgv ...string) ([]string, error) {
	f, err := remote.Load(r.home)
	if err != nil {
		return nil, err
	}
	h, err := f.Lookup(name)
	if err != nil {
		return nil, err
	}
	return h.Command(r.home, remoteArgv...)
}

// masterPid is the pid of the ssh master binky keeps for host (ssh -O
// check).
func masterPid(t *testing.T, r *remoteEnv, host string) string {
	t.Helper()
	argv, err := hostCommand(r, host)
	if err != nil {
		t.Fatal(err)
	}
	dest := argv[len(argv)-1]
	argv = append(append(argv[:len(argv)-2:len(argv)-2], "-O", "check"), "--", dest)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("ssh -O check for %s: %v\n%s", host, err, out)
	}
	return m[1]
}

// loginShell and homeOf read an account's passwd entry.
func loginShell(t *testing.T, name string) string { return passwdField(t, name, 6) }
func homeOf(t *testing.T, name string) string     { return passwdField(t, name, 5) }

func passwdField(t *testing.T, name string, i int) string {
	t.Helper()
	out, err := exec.Command("getent", "passwd", name).Output()
	f := strings.Split(strings.TrimSpace(string(out)), ":")
	if err != nil || len(f) < 7 {
		t.Fatalf("getent passwd %s: %v %q", name, err, out)
	}
	return f[i]
}

// TestRemoteMCPAndHooks: binky mcp --host serves the host's tools over
// stdio through ssh, and hook up|down --host bring the world of a local
// worktree up on the host (pushed) and remove it there.
func TestRemoteMCPAndHooks(t *testing.T) {
	r := newRemoteEnv(t)
	// hook up --host from a local worktree: its branch is pushed and up
	// on the host.
	near := r.render(strings.ReplaceAll(remoteWorld, `"far"`, `"hooked"`))
	os.WriteFile(filepath.Join(r.repo, "binky.toml"), []byte(near), 0o644)
	r.git("commit", "-q", "-am", "hooked")
	wt := filepath.Join(filepath.Dir(r.repo), "wt-hooked")
	r.git("worktree", "add", "-q", "-b", "hooked", wt)
	if res := r.binkyIn(wt, "hook", "up", "--host", "box"); res.code != 0 || res.stdout != "" {
		t.Fatalf("hook up --host: exit %d\nstdout %q\nstderr %s", res.code, res.stdout, res.stderr)
	}
	if w := r.remoteStatus().world(t, "hooked"); w.State != "up" {
		t.Errorf("hooked world on the host: %+v", w)
	}

	// mcp --host: initialize, then tools/list, answered by the host.
	cmd := exec.Command(filepath.Join(binDir, "binky"), "mcp", "--host", "box")
	cmd.Env, cmd.Dir = r.environ(), r.repo
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{}}}`,
	}, "\n") + "\n"
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte(in))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	got := ""
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			got = sc.Text()
			break
		}
	}
	stdin.Close()
	cmd.Process.Kill()
	cmd.Wait()
	if !strings.Contains(got, "hooked") {
		t.Errorf("mcp --host status does not show the host's world:\n%s\nstderr: %s", got, stderr.String())
	}

	// hook down --host removes it there; the local worktree stays.
	if res := r.binkyIn(wt, "hook", "down", "--host", "box"); res.code != 0 {
		t.Fatalf("hook down --host: exit %d\n%s", res.code, res.stderr)
	}
	if s := r.remoteStatus(); len(s.Worlds) != 0 {
		t.Errorf("worlds left on the host after hook down: %+v", s.Worlds)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Errorf("hook down --host removed the local worktree: %v", err)
	}
}

// TestRemoteTwoUsers: two local users drive one host, each as their own
// SSH user (the identity there), each seeing only their own worlds.
func TestRemoteTwoUsers(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	h := newSSHHost(t)
	alice, bob := newUnixUser(t), newUnixUser(t)
	type side struct {
		u *unixUser
		e *env
	}
	var sides []side
	for _, u := range []*unixUser{alice, bob} {
		// useradd locks the password ("!"), and sshd without PAM refuses a
		// locked account even a key: "*" is no password, not locked.
		if out, err := exec.Command("usermod", "-p", "*", u.name).CombinedOutput(); err != nil {
			t.Fatalf("usermod: %v\n%s", err, out)
		}
		e := newEnvAs(t, u, remoteWorld, "")
		cfg := h.client(u.base, u.name, u)
		hostHome := filepath.Join(u.base, "host-home")
		e.must("host", "add", "box", u.name+"@"+h.addr, "--ssh-config", cfg, "--remote-home", hostHome, "--binky", filepath.Join(binDir, "binky"))
		t.Cleanup(func() {
			h.exec("runuser", "-u", u.name, "--", filepath.Join(binDir, "binky"), "--home", hostHome, "daemon", "stop")
		})
		sides = append(sides, side{u, e})
	}
	for _, s := range sides {
		s.e.must("--host", "box", "up", "-q", "feat-"+s.u.name, "--repo", s.e.repo)
	}
	for i, s := range sides {
		res := s.e.must("--host", "box", "status", "--json")
		var st statusJSON
		if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
			t.Fatalf("%s's status: %v\n%s", s.u.name, err, res.stdout)
		}
		if len(st.Worlds) != 1 || st.Worlds[0].Worktree != "feat-"+s.u.name {
			t.Errorf("%s sees %+v; want only feat-%s", s.u.name, st.Worlds, s.u.name)
		}
		pid := st.Worlds[0].service(t, "web").Pid
		var stt syscall.Stat_t
		if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &stt); err != nil || stt.Uid != s.u.uid {
			t.Errorf("%s's web (pid %d) runs as uid %d, want %d (%v)", s.u.name, pid, stt.Uid, s.u.uid, err)
		}
		other := sides[1-i]
		if res := s.e.binky("--host", "box", "env", "feat-"+other.u.name); res.code == 0 {
			t.Errorf("%s reads %s's world on the host:\n%s", s.u.name, other.u.name, res.stdout)
		}
	}
	for _, s := range sides {
		s.e.must("--host", "box", "remove", "-q", "--force", "feat-"+s.u.name)
	}
}

// TestRemoteAny: --host any asks each host's admission in name order and
// places the world on the first that admits it; the choice is said and
// recorded.
func TestRemoteAny(t *testing.T) {
	r := newRemoteEnv(t)
	cfg := filepath.Join(filepath.Dir(r.home), "ssh_config")
	fullHome := filepath.Join(r.host.dir, "full-home")
	r.must("host", "add", "a-full", "root@"+r.host.addr, "--ssh-config", cfg, "--remote-home", fullHome, "--binky", filepath.Join(binDir, "binky"))
	t.Cleanup(func() {
		full := &remoteEnv{env: r.env, host: r.host, hostHome: fullHome}
		full.cleanupHost()
	})
	r.must("--host", "a-full", "reserve", "--max-parallel", "1")
	r.must("--host", "a-full", "up", "-q", "first", "--repo", r.hostRepo())
	res := r.must("--host", "any", "up", "-q", "placed")
	if !strings.Contains(res.stderr, "host a-full does not admit") || !strings.Contains(res.stderr, "placing on host box") {
		t.Errorf("--host any did not say its choice:\n%s", res.stderr)
	}
	if w := r.remoteStatus().world(t, "placed"); w.State != "up" {
		t.Errorf("placed world on box: %+v", w)
	}
	if rec := read(filepath.Join(r.home, "placements.json")); !strings.Contains(rec, `"box"`) {
		t.Errorf("placements.json: %s", rec)
	}
	if res := r.must("host", "list"); !strings.Contains(res.stdout, "-> box") {
		t.Errorf("host list does not show the placement:\n%s", res.stdout)
	}
	// Other verbs name their host.
	if res := r.binky("--host", "any", "status"); res.code != 2 {
		t.Errorf("status --host any: exit %d, want 2", res.code)
	}
}

// TestSystemExecRefusesOtherWire: the host's side refuses a caller of
// another wire version before the verb runs, after saying its own.
func TestSystemExecRefusesOtherWire(t *testing.T) {
	e := newEnv(t, remoteWorld)
	res := e.binky("system", "exec", "--wire", "999", "--", "up", "-q", "never")
	if res.code != 3 || !strings.HasPrefix(res.stdout, "binky-remote wire=") || !strings.Contains(res.stderr, "wire 999") {
		t.Fatalf("system exec --wire 999: exit %d\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "binky.db")); err == nil {
		t.Errorf("the refused verb ran: %s has a registry", e.home)
	}
	res = e.binky("system", "exec", "--", "--version")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "binky-remote wire=") || !strings.Contains(res.stdout, "\nbinky ") {
		t.Errorf("system exec -- --version: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// fetchOverSSH sends GET / to addr on the host through remote.DialTCP
// (the multiplexed connection's direct-tcpip channel) and returns the
// status line.
func fetchOverSSH(t *testing.T, r *remoteEnv, addr string) string {
	t.Helper()
	f, err := remote.Load(r.home)
	if err != nil {
		t.Fatal(err)
	}
	rem := &remote.Remote{Host: f.Hosts["box"], Home: r.home}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := rem.DialTCP(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}

// TestRemoteCutMidUp: the ssh connection cut while up runs on the host,
// then the host's sshd restarted: the next verbs open a new connection,
// and up again converges the world the host's daemon went on with.
func TestRemoteCutMidUp(t *testing.T) {
	r := newRemoteEnv(t)
	repo := r.hostRepo()
	// A web service slow to come up, so the cut lands mid-up.
	cfg := read(filepath.Join(repo, "binky.toml"))
	cfg = strings.Replace(cfg, "echo web says hello;", "echo web says hello; sleep 4;", 1)
	os.WriteFile(filepath.Join(repo, "binky.toml"), []byte(cfg), 0o644)
	up := exec.Command(filepath.Join(binDir, "binky"), "--host", "box", "up", "slow", "--repo", repo)
	up.Env, up.Dir = r.environ(), r.repo
	stderr, _ := up.StderrPipe()
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	// The host's daemon has started work on the world: cut.
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "web") {
			break
		}
	}
	killSSHSessions(t, r.host)
	go func() {
		for sc.Scan() {
		}
	}()
	if err := up.Wait(); err == nil {
		t.Logf("up finished before the cut (a fast machine); the rest still holds: %s", strings.Join(seen, " | "))
	}
	r.host.restart()
	// Recovery: a new connection, and up converges.
	r.must("--host", "box", "up", "-q", "slow", "--repo", repo)
	if w := r.remoteStatus().world(t, "slow"); w.State != "up" || w.service(t, "web").State != "running" {
		t.Errorf("after the cut and sshd's restart: %+v", w)
	}
	r.must("host", "check", "box")
	r.must("--host", "box", "remove", "-q", "--force", "slow")
}

// TestRemoteStaleMaster: the CLI's master stuck (stopped, so it neither
// answers nor removes its socket) while the host's sshd restarts leaves a
// control socket nothing answers on. The next verbs take it for stale,
// remove it and make a new master: they finish, without ssh's "already
// exists, disabling multiplexing" (each verb is bounded by the harness's
// context, not timed).
func TestRemoteStaleMaster(t *testing.T) {
	r := newRemoteEnv(t)
	r.must("--host", "box", "up", "-q", "feat", "--repo", r.hostRepo())
	old := masterPid(t, r, "box")
	pid, _ := strconv.Atoi(old)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGCONT)
	})
	r.host.restart()
	for _, verb := range [][]string{{"status"}, {"down", "-q", "feat"}, {"status", "--json"}} {
		res := r.must(append([]string{"--host", "box"}, verb...)...)
		if strings.Contains(res.stderr, "already exists") {
			t.Errorf("--host box %s: ssh ran without multiplexing:\n%s", strings.Join(verb, " "), res.stderr)
		}
	}
	if now := masterPid(t, r, "box"); now == old {
		t.Errorf("the stopped master (pid %s) still holds the socket", old)
	}
	if w := r.remoteStatus().world(t, "feat"); w.State != "down" {
		t.Errorf("feat after down: %+v", w)
	}
}

// TestRemoteRunTTY: run -it over --host, driven from a terminal here (a
// pty), gives the command a terminal on the host (its own /dev/pts/N)
// sized as this one, carries what is typed, and passes the exit status
// back; with stdin not a terminal the host's binky refuses -t as it does
// locally.
func TestRemoteRunTTY(t *testing.T) {
	r := newRemoteEnv(t)
	r.must("--host", "box", "up", "-q", "feat", "--repo", r.hostRepo())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), "--host", "box", "run", "-it", "feat", "--", "sh", "-c", `tty; stty size; echo "wt=$BINKY_WORKTREE"; while read x; do [ "$x" = q ] && exit 3; echo "now $(stty size) got $x."; done`)
	cmd.Dir, cmd.Env = r.repo, r.environ()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 33, Cols: 101})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := &syncBuf{}
	go io.Copy(out, ptmx)
	waitFor(t, "the command's terminal on the host, its size and world", func() bool {
		s := out.String()
		return regexp.MustCompile(`/dev/pts/\d+`).MatchString(s) && strings.Contains(s, "33 101") && strings.Contains(s, "wt=feat")
	})
	// This terminal resized: the command's on the host follows.
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new size on the host", func() bool {
		if strings.Contains(out.String(), "now 40 120") {
			return true
		}
		ptmx.Write([]byte("\r")) // an empty line: say the size now
		return false
	})
	ptmx.Write([]byte("ping\r"))
	waitFor(t, "the typed line echoed and read", func() bool { return strings.Contains(out.String(), "got ping.") })
	ptmx.Write([]byte("q\r"))
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("run -it over ssh: %v; want exit status 3\noutput:\n%s", err, out.String())
	}
	if s := out.String(); strings.Contains(s, "binky-remote") || strings.Contains(s, "Shared connection") {
		t.Errorf("the hello or ssh's closing words reached the terminal:\n%s", s)
	}

	// Without a terminal here, -t is refused (by the host's binky, in
	// its words), the same as locally.
	if res := r.binky("--host", "box", "run", "-t", "feat", "--", "true"); res.code != 2 || !strings.Contains(res.stderr, "not a terminal") {
		t.Errorf("run -t with no terminal over ssh: exit %d\n%s", res.code, res.stderr)
	}
}

// TestRemoteCompletion: shell completion with --host (or BINKY_HOST)
// lists the host's worktrees, not this machine's; a host it cannot reach
// gives no names, and no error.
func TestRemoteCompletion(t *testing.T) {
	r := newRemoteEnv(t)
	r.must("--host", "box", "up", "-q", "far-wt", "--repo", r.hostRepo())
	near := r.render(strings.ReplaceAll(remoteWorld, "PORTRANGE", fmt.Sprintf("[%d, %d]", r.rng[0], r.rng[0]+29)))
	os.WriteFile(filepath.Join(r.repo, "binky.toml"), []byte(near), 0o644)
	r.git("commit", "-q", "-am", "ports")
	r.must("up", "-q", "near-wt")
	t.Cleanup(func() { r.binky("remove", "-q", "--force", "near-wt") })

	complete := func(extra []string, words ...string) []string {
		t.Helper()
		r.extra = extra
		defer func() { r.extra = nil }()
		res := r.binky(append([]string{"__complete", "--"}, words...)...)
		if res.code != 0 {
			t.Fatalf("__complete %v: exit %d\n%s", words, res.code, res.stderr)
		}
		return strings.Fields(res.stdout)
	}
	has := func(got []string, s string) bool { return slices.Contains(got, s) }
	if got := complete(nil, "env", ""); !has(got, "near-wt") || has(got, "far-wt") {
		t.Errorf("local completion of env: %v; want near-wt only", got)
	}
	if got := complete(nil, "--host", "box", "env", ""); !has(got, "far-wt") || has(got, "near-wt") {
		t.Errorf("completion of --host box env: %v; want the host's far-wt only", got)
	}
	if got := complete([]string{"BINKY_HOST=box"}, "logs", "far-wt", ""); !has(got, "web") {
		t.Errorf("BINKY_HOST=box completion of a host world's services: %v; want web", got)
	}
	cfg := filepath.Join(filepath.Dir(r.home), "ssh_config")
	r.must("host", "add", "nowhere", "root@"+r.host.here+":22", "--ssh-config", cfg)
	if got := complete(nil, "--host", "nowhere", "env", ""); len(got) != 0 {
		t.Errorf("completion against an unreachable host: %v; want nothing", got)
	}
}
