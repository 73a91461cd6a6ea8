//go:build linux

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/binkyhq/binky/internal/testroot"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Tests of a shared host (issue 37) run binky as real Unix users: CI runs
// as root, so a test makes throw-away accounts with useradd, runs binky as
// them (the process credential, as runuser would), and removes them at
// exit, with every process they left. Without root such a test skips
// saying why; under CI=true it fails.

// unixUser is a throw-away account.
type unixUser struct {
	name     string
	uid, gid uint32
	base     string // a directory of theirs (0700): $HOME, BINKY_HOME, repositories
}

// newUnixUser makes a throw-away account with a private base directory,
// removed at the end of the test with everything it still runs.
func newUnixUser(t *testing.T) *unixUser {
	t.Helper()
	testroot.Need(t, "to create throw-away Unix users (useradd) and run binky as them")
	needCommand(t, "useradd", "Debian package passwd")
	var b [3]byte
	rand.Read(b[:])
	name := fmt.Sprintf("bky%d%s", os.Getpid()%100000, hex.EncodeToString(b[:]))
	if out, err := exec.Command("useradd", "-M", "-N", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	u := &unixUser{name: name}
	t.Cleanup(func() {
		// Their daemons and worlds first: userdel refuses a user with
		// processes.
		exec.Command("pkill", "-KILL", "-u", name).Run()
		for range 50 {
			if exec.Command("pgrep", "-u", name).Run() != nil {
				break
			}
			exec.Command("sleep", "0.1").Run()
		}
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
		if u.base != "" {
			os.RemoveAll(u.base)
		}
	})
	pw, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(pw.Uid, 10, 32)
	gid, _ := strconv.ParseUint(pw.Gid, 10, 32)
	u.uid, u.gid = uint32(uid), uint32(gid)
	base, err := os.MkdirTemp("", "binky-user-")
	if err != nil {
		t.Fatal(err)
	}
	u.base = base
	if err := os.Chown(base, int(u.uid), int(u.gid)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o700)
	return u
}

// cmd makes cmd run as u.
func (u *unixUser) cmd(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{}}
}

// run runs a command as u and returns its combined output.
func (u *unixUser) run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = u.base
	cmd.Env = []string{"HOME=" + u.base, "PATH=" + os.Getenv("PATH")}
	u.cmd(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// newEnvAs is newEnv for u: the home and the repository are u's, under
// u.base, and every binky and git command runs as u. leases is the shared
// lease store ("" for the test's own, made by sharedLeases).
func newEnvAs(t *testing.T, u *unixUser, config, leases string) *env {
	t.Helper()
	base, err := os.MkdirTemp(u.base, "env-")
	if err != nil {
		t.Fatal(err)
	}
	if leases == "" {
		leases = sharedLeases(t)
	}
	e := &env{t: t, home: filepath.Join(base, "home"), repo: filepath.Join(base, "repo"), rng: nextRange(60), leases: leases, userHome: u.base, as: u.cmd}
	os.MkdirAll(e.repo, 0o755)
	config = e.render(config)
	e.project, _, _, _ = projectName(config)
	if err := os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(base, u); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "init")
	t.Cleanup(e.cleanup)
	return e
}

// sharedLeases is a port lease store as a packaged machine has it: a
// directory root owns, sticky and writable by everyone (the test's own,
// never /tmp/binky-port-leases).
func sharedLeases(t *testing.T) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "binky-leases-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	os.Chmod(parent, 0o755)
	dir := filepath.Join(parent, "port-leases")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chownTree gives dir and everything under it to u.
func chownTree(dir string, u *unixUser) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.uid), int(u.gid))
	})
}

// userWebWorld is one web service, as a user's project has it.
const userWebWorld = `
[project]
name = "shared"
port_range = PORTRANGE

[services.web]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url    = "web"
health = "http://127.0.0.1:${self.port}/"
`

// TestUnixUserHarness: a world comes up, serves and goes as a throw-away
// user, with a daemon and processes of that user, and a second user
// cannot read the first's home.
func TestUnixUserHarness(t *testing.T) {
	alice := newUnixUser(t)
	bob := newUnixUser(t)
	leases := sharedLeases(t)
	e := newEnvAs(t, alice, userWebWorld, leases)
	e.must("up", "-q", "feat")
	w := e.status().world(t, "feat")
	pid := w.service(t, "web").Pid
	st, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Sys().(*syscall.Stat_t).Uid; got != alice.uid {
		t.Errorf("web runs as uid %d; want alice's %d", got, alice.uid)
	}
	if out, err := bob.run(t, "ls", e.home); err == nil {
		t.Errorf("bob lists alice's home:\n%s", out)
	}
	e.must("down", "feat")
}

// proxyOf is the address of the proxy serving the world's web URL.
func proxyOf(t *testing.T, e *env, worktree string) (addr, host string) {
	t.Helper()
	u, err := url.Parse(e.status().world(t, worktree).service(t, "web").URL)
	if err != nil || u.Port() == "" {
		t.Fatalf("web's URL %v has no proxy port", u)
	}
	return "127.0.0.1:" + u.Port(), u.Hostname()
}

// fetchAs fetches http://addr/ with Host host as u (curl, so the client
// socket is u's) and returns the status line's code and the body.
func fetchAs(t *testing.T, u *unixUser, addr, host string) (int, string) {
	t.Helper()
	args := []string{"-s", "-o", "-", "-w", "\n%{http_code}", "-H", "Host: " + host, "http://" + addr + "/"}
	var out string
	var err error
	if u == nil {
		var b []byte
		b, err = exec.Command("curl", args...).Output()
		out = string(b)
	} else {
		out, err = u.run(t, "curl", args...)
	}
	if err != nil {
		t.Fatalf("curl %s (Host %s): %v\n%s", addr, host, err, out)
	}
	i := strings.LastIndex(out, "\n")
	code, _ := strconv.Atoi(out[i+1:])
	return code, out[:i]
}

// TestDashboardOnlyForItsUser: another local user who fetches a home's
// dashboard or an unknown name's route list is refused with a page that
// names nothing of the home; the home's user is served; proxied traffic
// to the running world is unchanged for both (issue 37, item 4).
func TestDashboardOnlyForItsUser(t *testing.T) {
	needCommand(t, "curl", "apt-get install curl")
	alice, bob := newUnixUser(t), newUnixUser(t)
	e := newEnvAs(t, alice, userWebWorld, sharedLeases(t))
	e.must("up", "-q", "feat")
	addr, host := proxyOf(t, e, "feat")
	secrets := []string{"feat", "shared", e.project, e.home, e.repo}
	for _, h := range []string{"binky.localhost", "nosuch." + e.project + ".localhost"} {
		code, body := fetchAs(t, bob, addr, h)
		if code != 403 {
			t.Errorf("bob's GET Host %s: %d; want 403\n%s", h, code, body)
		}
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("bob's GET Host %s reveals %q:\n%s", h, s, body)
			}
		}
		code, body = fetchAs(t, alice, addr, h)
		if code == 403 || !strings.Contains(body, "feat") {
			t.Errorf("alice's GET Host %s: %d; want her page naming her world\n%s", h, code, body)
		}
	}
	// The application itself answers everyone, as it would on its port.
	for _, u := range []*unixUser{alice, bob} {
		if code, body := fetchAs(t, u, addr, host); code != 200 {
			t.Errorf("%s's GET of the world's URL: %d; want 200 from the app\n%s", u.name, code, body)
		}
	}
}

// plantAs runs a shell script as u in dir (their files, their locks).
func plantAs(t *testing.T, u *unixUser, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + u.base, "PATH=" + os.Getenv("PATH")}
	u.cmd(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as %s: %v\n%s\n%s", u.name, err, script, out)
	}
}

// startHolder starts a lock holder (flock and the command it runs) in a
// process group of its own, ended whole at cleanup: flock forks its
// command, so killing flock alone left a sleep behind.
func startHolder(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { endHolder(cmd) })
}

// endHolder kills the holder's whole process group and reaps flock.
func endHolder(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}

// holdLockAs starts `flock path sleep` as u and returns once u holds the
// lock; the holder is ended at cleanup.
func holdLockAs(t *testing.T, u *unixUser, path string) {
	t.Helper()
	ready := filepath.Join(u.base, "locked-"+filepath.Base(filepath.Dir(path))+filepath.Base(path))
	cmd := exec.Command("flock", "-o", path, "sh", "-c", "touch "+ready+"; exec sleep 600")
	cmd.Env = []string{"HOME=" + u.base, "PATH=" + os.Getenv("PATH")}
	u.cmd(cmd)
	startHolder(t, cmd)
	waitFor(t, u.name+" holds "+path, func() bool { _, err := os.Stat(ready); return err == nil })
}

// TestLeasesOtherUserCannotBlock: nothing another local user writes or
// locks in the shared lease store stops a user's up or daemon start
// (issue 37, items 1 and 2). Bob, before Alice ever ran binky, squats her
// lease directory's name, writes junk, too-wide, symlinked and FIFO lease
// files over her whole range, and holds every lock he can; Alice's up
// still takes ports in her range, names each ignored file and its owner,
// her daemon restarts while Bob holds the locks, and doctor lists them.
// Bob's one honest lease (a block of his live home) is still respected.
func TestLeasesOtherUserCannotBlock(t *testing.T) {
	needCommand(t, "flock", "Debian package util-linux")
	alice, bob := newUnixUser(t), newUnixUser(t)
	leases := sharedLeases(t)
	e := newEnvAs(t, alice, userWebWorld, leases)
	lo, hi := e.rng[0], e.rng[1]
	bobDir := fmt.Sprintf("uid-%d", bob.uid)
	honest := fmt.Sprintf(`{"lo":%d,"hi":%d,"uid":%d,"home_id":"bobs","home_dir":%q,"project":"his","worktree":"main","pid":0,"created":"2026-12-07T00:00:00Z"}`, lo, lo+1, bob.uid, bob.base)
	wide := fmt.Sprintf(`{"lo":1024,"hi":65535,"uid":%d,"home_id":"bobs","home_dir":%q,"project":"his","worktree":"all","pid":0,"created":"2026-12-07T00:00:00Z"}`, bob.uid, bob.base)
	plantAs(t, bob, leases, fmt.Sprintf(`
echo '{}' > block-1024-65535.json
mkdir -m 0755 uid-%[1]d %[2]s
cd %[2]s
echo '{}' > block-%[3]d-%[4]d.json
echo '%[5]s' > block-%[10]d-%[6]d.json
echo '%[7]s' > block-1024-65535.json
ln -s /etc/passwd block-%[8]d-%[4]d.json
mkfifo block-%[9]d-%[4]d.json
: > .lock
`, alice.uid, bobDir, lo+2, hi, honest, lo+1, wide, lo+3, lo+4, lo))
	// The old shared lock, Bob's own, and whatever Bob made under Alice's
	// directory name: held for the whole test.
	holdLockAs(t, bob, filepath.Join(leases, ".lock"))
	holdLockAs(t, bob, filepath.Join(leases, bobDir, ".lock"))
	plantAs(t, bob, filepath.Join(leases, fmt.Sprintf("uid-%d", alice.uid)), ": > .lock")
	holdLockAs(t, bob, filepath.Join(leases, fmt.Sprintf("uid-%d", alice.uid), ".lock"))

	r := e.must("up", "feat")
	w := e.status().world(t, "feat")
	if w.Ports[0] < lo || w.Ports[1] > hi {
		t.Fatalf("feat's ports %v lie outside its range %d-%d", w.Ports, lo, hi)
	}
	out := r.stdout + r.stderr
	if w.Ports[0] <= lo+1 {
		t.Errorf("feat's ports %v overlap Bob's honest lease of %d-%d:\n%s", w.Ports, lo, lo+1, out)
	}
	owner := fmt.Sprintf("(owner uid %d)", bob.uid)
	if !strings.Contains(out, "ignored port lease") || !strings.Contains(out, owner) {
		t.Errorf("up does not name the ignored leases and their owner %s:\n%s", owner, out)
	}

	// A daemon start while Bob holds every lock he can.
	e.must("daemon", "stop")
	e.must("status")
	if pid := e.status().world(t, "feat").service(t, "web").Pid; pid != w.service(t, "web").Pid {
		t.Errorf("web's pid %d after the restart; want the re-adopted %d", pid, w.service(t, "web").Pid)
	}
	e.must("up", "-q", "second")

	d := e.binky("doctor")
	for _, want := range []string{"ignored port lease", owner, "symbolic link", "FIFO", "more than one world's block"} {
		if !strings.Contains(d.stdout+d.stderr, want) {
			t.Errorf("doctor does not say %q:\n%s%s", want, d.stdout, d.stderr)
		}
	}
}

// TestLeaseDirOfAnotherUserRefused: a lease directory another non-root
// user made (after /tmp was cleared, say) is refused with the fix, and
// the refused user's daemon still starts (issue 37, item 3).
func TestLeaseDirOfAnotherUserRefused(t *testing.T) {
	alice, bob := newUnixUser(t), newUnixUser(t)
	// A directory like /tmp: anyone may make their own in it.
	parent := filepath.Dir(sharedLeases(t))
	os.Chmod(parent, os.ModeSticky|0o777)
	leases := filepath.Join(parent, "bobs-leases")
	plantAs(t, bob, parent, "mkdir -m 1777 bobs-leases")
	e := newEnvAs(t, alice, userWebWorld, leases)
	r := e.binky("up", "feat")
	if r.code == 0 {
		t.Fatalf("up with a lease directory Bob owns succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{leases, "is refused", fmt.Sprintf("uid %d", bob.uid), "root", "BINKY_PORT_LEASES"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("up's refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	e.must("status") // the daemon runs
	if ents, _ := os.ReadDir(leases); len(ents) != 0 {
		t.Errorf("alice wrote into Bob's lease directory: %v", ents)
	}
}

// TestOwnLeaseLockHeldIsNamed: a process of the user's own that sits on
// their lease lock makes up fail after a bounded wait, naming the lock
// and its holder, instead of hanging (issue 37, item 2).
func TestOwnLeaseLockHeldIsNamed(t *testing.T) {
	needCommand(t, "flock", "Debian package util-linux")
	e := newEnv(t, userWebWorld)
	e.must("up", "-q", "feat")
	locks, _ := filepath.Glob(filepath.Join(e.leases, "uid-*", ".lock"))
	if len(locks) != 1 {
		t.Fatalf("lease locks %v; want this user's one", locks)
	}
	ready := filepath.Join(t.TempDir(), "locked")
	holder := exec.Command("flock", "-o", locks[0], "sh", "-c", "touch "+ready+"; exec sleep 600")
	startHolder(t, holder)
	waitFor(t, "flock holds "+locks[0], func() bool { _, err := os.Stat(ready); return err == nil })
	r := e.binky("up", "-q", "second")
	if r.code == 0 {
		t.Fatalf("up succeeded while the lease lock was held")
	}
	for _, want := range []string{locks[0], "is held by pid", "still held after"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("up's error does not say %q:\n%s", want, r.stderr)
		}
	}
	e.must("status") // the daemon still answers
	endHolder(holder)
	e.must("up", "-q", "second")
}
