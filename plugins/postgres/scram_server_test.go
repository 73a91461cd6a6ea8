package postgresadapter

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestOwnerRolePasswordAuthenticates checks what the shared server (trust
// auth) cannot: that the password resolve hands out really logs the slice
// role in. It starts a private PostgreSQL with scram-sha-256 auth (initdb +
// pg_ctl, as the postgres user when run as root), provisions and clones
// owner-role slices there, logs in with the resolved addresses, and is
// refused with a wrong password.
func TestOwnerRolePasswordAuthenticates(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the private server is started the Unix way")
	}
	admin := privateScramServer(t)
	a := New()
	src, dst := "bt_scram_golden", "bt_scram_clone"
	for _, s := range []string{src} {
		if _, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, ownerRole)}); err != nil {
			t.Fatalf("provision %s: %v", s, err)
		}
	}
	r := resolveT(t, a, admin, src, ownerRole)
	c, err := pgx.Connect(t.Context(), r.Address)
	if err != nil {
		t.Fatalf("log in with the resolved address: %v", err)
	}
	exec1(t, c, "CREATE TABLE t (x int)")
	exec1(t, c, "INSERT INTO t VALUES (1)")
	_ = c.Close(t.Context())

	if _, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, dst, ownerRole), Source: src}); err != nil {
		t.Fatalf("clone: %v", err)
	}
	// A second adapter (another process, in real use) resolves the same.
	rc := resolveT(t, New(), admin, dst, ownerRole)
	cc, err := pgx.Connect(t.Context(), rc.Address)
	if err != nil {
		t.Fatalf("log in to the clone with its resolved address: %v", err)
	}
	if got := count(t, cc, "SELECT count(*) FROM t"); got != 1 {
		t.Errorf("clone has %d rows; want 1", got)
	}
	_ = cc.Close(t.Context())

	wrong, _ := url.Parse(rc.Address)
	wrong.User = url.UserPassword(dst, "not-the-password")
	_, err = pgx.Connect(t.Context(), wrong.String())
	if code := pgErrCode(err); code != codeInvalidPassword {
		t.Errorf("log in with a wrong password: %v (SQLSTATE %q); want %s", err, code, codeInvalidPassword)
	}
	// The first slice's credentials do not open the clone.
	cross, _ := url.Parse(r.Address)
	cross.Path = "/" + dst
	if _, err := pgx.Connect(t.Context(), cross.String()); err == nil {
		t.Errorf("role %s logged in to %s; want it refused", src, dst)
	}
}

// privateScramServer starts a throwaway PostgreSQL on a free loopback port
// with scram-sha-256 for every connection, stopped and removed when the
// test ends, and returns its admin URL. When initdb is missing it fails
// under CI=true and skips otherwise. settings ("name=value") are passed
// to the server as -c options.
func privateScramServer(t *testing.T, settings ...string) string {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		msg := "initdb not found (install postgresql, or put its bin directory on PATH)"
		adaptertest.MissingServer(t, msg)
	}
	var asUser []string
	var owner *user.User
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and there is no postgres user to run initdb as: %v", err)
		}
		owner = u
		asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	dir, err := os.MkdirTemp("", "binky-pg-scram-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	const adminPW = "admin-pw"
	pwfile := filepath.Join(dir, "pw")
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		if len(asUser) > 0 {
			cmd = exec.Command(asUser[0], append(append(asUser[1:], name), args...)...)
		}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("sh", "-c", "printf %s "+adminPW+" > "+pwfile)
	run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "scram-sha-256", "--pwfile", pwfile, "--no-sync", "-E", "UTF8")
	port := freePort(t)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir)
	for _, kv := range settings {
		opts += " -c " + kv
	}
	run(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "30", "start")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		if len(asUser) > 0 {
			cmd = exec.Command(asUser[0], append(asUser[1:], filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")...)
		}
		_ = cmd.Run()
	})
	admin := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres", adminPW, port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the private server: %v", err)
	}
	_ = c.Close(ctx)
	return admin
}

// pgBinDir is the directory of the newest initdb: Debian's
// /usr/lib/postgresql/<v>/bin, else wherever PATH has it.
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0])
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
