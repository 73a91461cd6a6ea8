//go:build linux

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/internal/testroot"
)

// A "remote host" of the test's own (issue 42): a network namespace with a
// veth pair to this one, its own loopback, and OpenSSH's sshd on the
// namespace's address with its own host key, authorized keys and pid
// file. The namespace shares the filesystem and the users, so the host's
// binky is bin/'s, with its own BINKY_HOME; but a port a world opens on
// the host's loopback is not this machine's (scripts/testenv up sshd
// installs sshd and checks namespaces can be made).
type sshHost struct {
	t      *testing.T
	ns     string // the namespace
	addr   string // sshd's address, in the namespace
	here   string // this side's end of the veth pair (nothing listens on it)
	dir    string // sshd's files
	leases string // the host's port lease store
	sshd   *exec.Cmd
}

const sshdBin = "/usr/sbin/sshd"

// newSSHHost starts a host; it is torn down, with everything that runs in
// it, at the end of the test.
func newSSHHost(t *testing.T) *sshHost {
	t.Helper()
	testroot.Need(t, "to make a network namespace with sshd in it (a remote host)")
	needCommand(t, "ip", "apt-get install iproute2")
	needCommand(t, "ssh", "apt-get install openssh-client")
	needCommand(t, "ssh-keygen", "apt-get install openssh-client")
	if _, err := os.Stat(sshdBin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (scripts/testenv up sshd installs openssh-server): CI must have it", sshdBin)
		}
		t.Skipf("%s is missing (scripts/testenv up sshd installs openssh-server)", sshdBin)
	}
	var b [4]byte
	rand.Read(b[:])
	tag := hex.EncodeToString(b[:3])
	h := &sshHost{t: t, ns: "binky-t" + tag, dir: t.TempDir()}
	// sshd reads a user's authorized_keys as that user: other users must
	// reach them here (and the binky of the host, its repositories).
	os.Chmod(h.dir, 0o755)
	os.Chmod(filepath.Dir(h.dir), 0o755)
	// A /30 of the test's own: .1 here, .2 in the namespace.
	net3 := fmt.Sprintf("10.%d.%d.%d", 100+int(b[0])%150, b[1], int(b[2])&^3)
	pre := net3[:strings.LastIndexByte(net3, '.')+1]
	last := int(b[2]) &^ 3
	here, there := fmt.Sprintf("%s%d", pre, last+1), fmt.Sprintf("%s%d", pre, last+2)
	h.addr, h.here = there, here
	vh, vr := "bkh"+tag, "bkr"+tag
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", h.ns)
	t.Cleanup(h.teardown)
	run("ip", "link", "add", vh, "type", "veth", "peer", "name", vr)
	run("ip", "link", "set", vr, "netns", h.ns)
	run("ip", "addr", "add", here+"/30", "dev", vh)
	run("ip", "link", "set", vh, "up")
	run("ip", "netns", "exec", h.ns, "ip", "addr", "add", there+"/30", "dev", vr)
	run("ip", "netns", "exec", h.ns, "ip", "link", "set", vr, "up")
	run("ip", "netns", "exec", h.ns, "ip", "link", "set", "lo", "up")

	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(h.dir, "hostkey"))
	os.MkdirAll(filepath.Join(h.dir, "authorized"), 0o755)
	h.leases = filepath.Join(h.dir, "leases")
	os.MkdirAll(h.leases, 0o777)
	os.Chmod(h.leases, os.ModeSticky|0o777)
	cfg := strings.Join([]string{
		"ListenAddress " + there + ":22",
		"HostKey " + filepath.Join(h.dir, "hostkey"),
		"AuthorizedKeysFile " + filepath.Join(h.dir, "authorized", "%u"),
		"PidFile " + filepath.Join(h.dir, "sshd.pid"),
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"LogLevel ERROR",
		"MaxSessions 50",
		"MaxStartups 50",
		// The host's binkys: their own lease store and proxy ports.
		"SetEnv BINKY_PORT_LEASES=" + h.leases + " BINKY_PROXY_ADDR=127.0.0.1:0 BINKY_PROXY_TLS_ADDR=127.0.0.1:0 GIT_CONFIG_GLOBAL=/dev/null",
	}, "\n") + "\n"
	cfgPath := filepath.Join(h.dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("/run/sshd", 0o755)
	h.start()
	return h
}

// start runs sshd in the namespace and waits until it accepts.
func (h *sshHost) start() {
	h.t.Helper()
	h.sshd = exec.Command("ip", "netns", "exec", h.ns, sshdBin, "-D", "-e", "-f", filepath.Join(h.dir, "sshd_config"))
	logf, _ := os.OpenFile(filepath.Join(h.dir, "sshd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	h.sshd.Stdout, h.sshd.Stderr = logf, logf
	if err := h.sshd.Start(); err != nil {
		h.t.Fatal(err)
	}
	waitFor(h.t, "sshd on "+h.addr+":22", func() bool {
		c, err := net.DialTimeout("tcp", h.addr+":22", time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// restart stops sshd and every connection it serves (the host's binkys
// and worlds keep running), then starts it again.
func (h *sshHost) restart() {
	h.t.Helper()
	for _, p := range h.pids() {
		if strings.TrimSpace(read("/proc/"+p+"/comm")) == "sshd" {
			exec.Command("kill", "-KILL", p).Run()
		}
	}
	h.sshd.Wait()
	h.start()
}

// client makes what user (a local account; the host has the same ones)
// needs to ssh to the host: a key, authorized there, a known_hosts with
// the host's key and an ssh config that uses only these, written under
// dir (theirs). It returns the ssh config's path.
func (h *sshHost) client(dir, user string, u *unixUser) string {
	h.t.Helper()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		h.t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	auth := filepath.Join(h.dir, "authorized", user)
	f, err := os.OpenFile(auth, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	f.Write(pub)
	f.Close()
	hostPub, _ := os.ReadFile(filepath.Join(h.dir, "hostkey.pub"))
	kh := filepath.Join(dir, "known_hosts")
	os.WriteFile(kh, []byte(h.addr+" "+string(hostPub)), 0o644)
	cfg := filepath.Join(dir, "ssh_config")
	os.WriteFile(cfg, []byte(strings.Join([]string{
		"Host *",
		"  UserKnownHostsFile " + kh,
		"  GlobalKnownHostsFile /dev/null",
		"  StrictHostKeyChecking yes",
		"  IdentityFile " + key,
		"  IdentitiesOnly yes",
		"  BatchMode yes",
		"  LogLevel ERROR",
		"  ConnectTimeout 20",
	}, "\n")+"\n"), 0o644)
	if u != nil {
		for _, p := range []string{key, key + ".pub", kh, cfg} {
			os.Chown(p, int(u.uid), int(u.gid))
		}
	}
	return cfg
}

// exec runs a command in the namespace (as the host's root) and returns
// its combined output.
func (h *sshHost) exec(args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", h.ns}, args...)...).CombinedOutput()
	return string(out), err
}

// pids are the processes running in the namespace.
func (h *sshHost) pids() []string {
	out, _ := exec.Command("ip", "netns", "pids", h.ns).Output()
	return strings.Fields(string(out))
}

// teardown kills everything in the namespace (sshd, the host's daemons
// and worlds) and removes it, which removes the veth pair too.
func (h *sshHost) teardown() {
	for range 3 {
		p := h.pids()
		if len(p) == 0 {
			break
		}
		exec.Command("kill", append([]string{"-KILL"}, p...)...).Run()
		time.Sleep(100 * time.Millisecond)
	}
	if h.sshd != nil {
		h.sshd.Wait()
	}
	if out, err := exec.Command("ip", "netns", "del", h.ns).CombinedOutput(); err != nil {
		h.t.Errorf("ip netns del %s: %v\n%s", h.ns, err, out)
	}
}

// postgres starts a PostgreSQL server of the host's own: initdb'd into
// the host's files as the postgres user, listening on 127.0.0.1:5432 of
// the namespace (a loopback this machine does not share, so the port is
// not this machine's server's) with its socket among those files. It is
// stopped at the end of the test, before the namespace goes. It returns
// the server's superuser URL, as the host sees it.
func (h *sshHost) postgres() string {
	h.t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		if os.Getenv("CI") == "true" {
			h.t.Fatal("initdb is missing (apt-get install postgresql): CI must have it")
		}
		h.t.Skip("initdb is missing (apt-get install postgresql)")
	}
	needCommand(h.t, "psql", "apt-get install postgresql-client")
	bin := filepath.Dir(bins[len(bins)-1])
	dir := filepath.Join(h.dir, "pg")
	os.MkdirAll(filepath.Join(dir, "sock"), 0o755)
	if out, err := exec.Command("chown", "-R", "postgres:", dir).CombinedOutput(); err != nil {
		h.t.Fatalf("chown %s to postgres: %v\n%s", dir, err, out)
	}
	asPostgres := func(args ...string) {
		h.t.Helper()
		if out, err := h.exec(append([]string{"runuser", "-u", "postgres", "--"}, args...)...); err != nil {
			h.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	data := filepath.Join(dir, "data")
	asPostgres(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	opts := "-c listen_addresses=127.0.0.1 -c port=5432 -c fsync=off -c unix_socket_directories=" + filepath.Join(dir, "sock")
	asPostgres(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "120", "start")
	h.t.Cleanup(func() {
		h.exec("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
	})
	return "postgres://postgres@127.0.0.1:5432/postgres"
}

// psql runs sql on the host's own server (h.postgres), in the
// namespace, and returns its unaligned output.
func (h *sshHost) psql(db, sql string) (string, error) {
	out, err := h.exec("psql", "-qXAt", "postgres://postgres@127.0.0.1:5432/"+db, "-c", sql)
	return strings.TrimSpace(out), err
}
