package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The packaging tests run against what `make dist` made: .ci/run's dist
// block builds dist/, sets BINKY_TEST_DIST to it, installs the .debs and
// sets BINKY_TEST_DEB=1, then runs them one by one. Elsewhere they skip.

// distDir is dist/, or the test is skipped.
func distDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("BINKY_TEST_DIST")
	if d == "" {
		t.Skip("BINKY_TEST_DIST is not set: run make dist, then BINKY_TEST_DIST=$PWD/dist (.ci/run does)")
	}
	return d
}

// systemPath is a PATH without the test's binaries: only what the machine
// has installed.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// run runs exe with the test's environment, PATH set to path.
func (e *env) run(exe, path string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = e.repo
	cmd.Env = append(append(e.environ(), e.extra...), "PATH="+path)
	out, err := cmd.Output()
	r := result{stdout: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code, r.stderr = ee.ExitCode(), string(ee.Stderr)
	} else if err != nil {
		e.t.Fatalf("%s %v: %v", exe, args, err)
	}
	return r
}

type pkgAdapterJSON struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Origin  string `json:"origin"`
	Version string `json:"version"`
}

// TestNpmPackageMCP installs the packed npm packages (binky and this
// platform's binaries) into a temporary prefix, as `npx -y binky` would,
// and drives `binky mcp` through the package's launcher with an MCP client:
// nothing of the test's binaries is on PATH. A world with the sqlite
// adapter the package carries comes up through it.
func TestNpmPackageMCP(t *testing.T) {
	dist := distDir(t)
	needCommand(t, "npm", "apt-get install npm")
	osName, cpu := runtime.GOOS, runtime.GOARCH
	if osName == "windows" {
		osName = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	main, _ := filepath.Glob(filepath.Join(dist, "npm", "binky-[0-9]*.tgz"))
	plat, _ := filepath.Glob(filepath.Join(dist, "npm", "binkyhq-binky-"+osName+"-"+cpu+"-*.tgz"))
	if len(main) != 1 || len(plat) != 1 {
		t.Fatalf("npm tarballs in %s: got %v and %v; want one binky and one for %s-%s", dist, main, plat, osName, cpu)
	}
	prefix := t.TempDir()
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", "--loglevel=error", plat[0], main[0])
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(prefix, ".npm-cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	launcher := filepath.Join(prefix, "node_modules", ".bin", "binky")

	e := newEnv(t, `
[project]
name = "npmworld"
port_range = PORTRANGE

[services.db]
adapter = "sqlite"

[agents]
expose = ["db"]
`)
	if r := e.run(launcher, systemPath, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "binky ") {
		t.Fatalf("binky --version through npm: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	mcpCmd := exec.Command(launcher, "mcp")
	mcpCmd.Dir = e.repo
	mcpCmd.Env = append(e.environ(), "PATH="+systemPath)
	client := sdk.NewClient(&sdk.Implementation{Name: "binky-npm-e2e", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatalf("connect an MCP client to npx-style binky mcp: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",up,") {
		t.Fatalf("tools: got %v; want up among them", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "up", Arguments: map[string]any{"branch": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		t.Fatalf("up through the npm package: %s", b)
	}
	w := e.status().world(t, "main")
	if db := w.service(t, "db"); !strings.HasPrefix(db.Address, "sqlite://") {
		t.Errorf("db: got address %q; want a sqlite slice made by the packaged adapter", db.Address)
	}
}

// TestDebPackages runs against the .debs .ci/run installed with dpkg -i
// (BINKY_TEST_DEB=1): only /usr/bin/binky and the packaged adapters, with
// nothing of bin/ on PATH. The postgres adapter is found in the system
// adapter directory, a postgres world comes up, and removing an adapter
// package leaves binky working without it.
func TestDebPackages(t *testing.T) {
	distDir(t)
	if os.Getenv("BINKY_TEST_DEB") != "1" {
		t.Skip("BINKY_TEST_DEB is not 1: the .debs are not installed (.ci/run installs them)")
	}
	needServer(t, "PostgreSQL", "127.0.0.1:5432", "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start")
	const binky = "/usr/bin/binky"
	e := newEnv(t, `
[project]
name = "debworld"
port_range = PORTRANGE

[services.db]
adapter = "postgresql"
admin_url = "${env.DEB_PG_ADMIN}"

[agents]
expose = ["db"]
`)
	e.extra = append(e.extra, "DEB_PG_ADMIN=postgres://postgres@127.0.0.1:5432/postgres")
	adapters := func() map[string]pkgAdapterJSON {
		t.Helper()
		r := e.run(binky, systemPath, "adapters", "--json")
		if r.code != 0 {
			t.Fatalf("binky adapters: exit %d: %s", r.code, r.stderr)
		}
		var list []pkgAdapterJSON
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("adapters --json: %v\n%s", err, r.stdout)
		}
		out := map[string]pkgAdapterJSON{}
		for _, a := range list {
			if _, ok := out[a.Name]; !ok {
				out[a.Name] = a
			}
		}
		return out
	}
	pg, ok := adapters()["postgres"]
	if !ok || pg.Origin != "system" || pg.Path != "/usr/lib/binky/adapters/binky-adapter-postgres" || pg.Version == "" {
		t.Fatalf("postgres adapter: got %+v (found %v); want it from the system directory, with a version", pg, ok)
	}
	cmd := exec.Command(binky, "up", "main")
	cmd.Dir = e.repo
	cmd.Env = append(append(e.environ(), e.extra...), "PATH="+systemPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("up with the packaged binky and adapter: %v\n%s\n%s", err, out, e.daemonLog())
	}
	w := e.status().world(t, "main")
	if db := w.service(t, "db"); !strings.HasPrefix(db.Address, "postgres") {
		t.Errorf("db: got address %q; want a postgres slice", db.Address)
	}
	if r := e.run(binky, systemPath, "remove", "--force", "-q", "main"); r.code != 0 {
		t.Fatalf("remove: exit %d: %s", r.code, r.stderr)
	}

	// Removing one adapter package: binky still works, and the adapter is
	// gone from the list. (.ci/run removes the rest at exit.)
	if out, err := exec.Command("dpkg", "-r", "binky-adapter-s3").CombinedOutput(); err != nil {
		t.Fatalf("dpkg -r binky-adapter-s3: %v\n%s", err, out)
	}
	if r := e.run(binky, systemPath, "--version"); r.code != 0 {
		t.Fatalf("binky --version after dpkg -r: exit %d: %s", r.code, r.stderr)
	}
	got := adapters()
	if a, ok := got["s3"]; ok && a.Origin == "system" {
		t.Errorf("after dpkg -r binky-adapter-s3: s3 still listed from %s", a.Path)
	}
	if _, ok := got["postgres"]; !ok {
		t.Error("after dpkg -r binky-adapter-s3: postgres is gone too")
	}
}

// TestAdapterOnCallerPathAfterDaemon: the daemon discovers adapters on the
// PATH of the caller of each verb, not its own: an adapter put on the
// caller's PATH after the daemon started is found by up.
func TestAdapterOnCallerPathAfterDaemon(t *testing.T) {
	e := newEnv(t, `
[project]
name = "latecomer"
port_range = PORTRANGE

[services.db]
adapter = "latesqlite"
`)
	e.must("daemon", "start")
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(binDir, "binky-adapter-sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "binky-adapter-latesqlite"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.binky("up", "main"); r.code == 0 || !strings.Contains(r.stderr, "binky-adapter-latesqlite") {
		t.Fatalf("up before the adapter is on the caller's PATH: exit %d, %s; want a not-found error naming it", r.code, r.stderr)
	} else if !strings.Contains(r.stderr, filepath.Join(e.home, "adapters")) {
		t.Errorf("not-found error %q: want the directories searched named", r.stderr)
	}
	e.extra = append(e.extra, "PATH="+dir+string(os.PathListSeparator)+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	e.must("up", "main")
	if db := e.status().world(t, "main").service(t, "db"); !strings.HasPrefix(db.Address, "sqlite://") {
		t.Errorf("db: got %q; want a sqlite slice", db.Address)
	}
}
