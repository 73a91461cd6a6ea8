package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// binDir holds the binaries TestMain built (or took from BINKY_TEST_BIN).
var binDir string

func TestMain(m *testing.M) {
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// A build of one or more packages of one module into binDir.
type build struct {
	mod  string   // the module's directory
	pkgs []string // its packages, relative to mod
	out  string   // the binary's name when not its package's (one package)
}

// names are the binaries b makes.
func (b build) names() []string {
	if b.out != "" {
		return []string{b.out}
	}
	var out []string
	for _, p := range b.pkgs {
		out = append(out, filepath.Base(p))
	}
	return out
}

// buildAndRun puts the binaries every test runs into a directory of their
// own, once per run: hard links to the ones `make build` left in
// $BINKY_TEST_BIN when it holds them all (make unit and make test set it,
// so a run builds nothing twice), else one go build per module.
func buildAndRun(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "binky-e2e-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // another uid runs these binaries in TestOtherUserRefused
	root, err := filepath.Abs("..")
	if err != nil {
		return 0, err
	}
	builds, err := binaries(root)
	if err != nil {
		return 0, err
	}
	linked := false
	if from := os.Getenv("BINKY_TEST_BIN"); from != "" {
		if linked = linkAll(from, dir, builds); !linked {
			// One is missing: build them all, into a clean directory.
			os.RemoveAll(dir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				return 0, err
			}
			os.Chmod(dir, 0o755)
		}
	}
	if !linked {
		for _, b := range builds {
			out := dir + string(os.PathSeparator)
			if b.out != "" {
				out = filepath.Join(dir, exe(b.out))
			}
			args := append([]string{"build", "-o", out}, b.pkgs...)
			cmd := exec.Command("go", args...)
			cmd.Dir = b.mod
			if out, err := cmd.CombinedOutput(); err != nil {
				return 0, fmt.Errorf("build %s: %v\n%s", strings.Join(b.pkgs, " "), err, out)
			}
		}
	}
	binDir = dir
	defer claimPortWindow()()
	return m.Run(), nil
}

// binaries lists what the tests run: binky, binkyd, the demo app and every
// adapter binary of the workspace's plugin modules
// (plugins/<module>/cmd/binky-adapter-<name>).
func binaries(root string) ([]build, error) {
	builds := []build{
		{mod: root, pkgs: []string{"./cmd/binky", "./cmd/binkyd"}}, // the daemon and the verbs binky hands off
		{mod: root, pkgs: []string{"./examples/demo/app"}, out: "binky-demo-app"},
	}
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	cmds, _ := filepath.Glob(filepath.Join(root, "plugins", "*", "cmd", "binky-adapter-*"))
	byMod := map[string]int{}
	for _, c := range cmds {
		mod := filepath.Dir(filepath.Dir(c))
		if !strings.Contains(string(work), "./plugins/"+filepath.Base(mod)+"\n") {
			continue // not (yet) a module of the workspace
		}
		i, ok := byMod[mod]
		if !ok {
			i = len(builds)
			byMod[mod] = i
			builds = append(builds, build{mod: mod})
		}
		builds[i].pkgs = append(builds[i].pkgs, "./cmd/"+filepath.Base(c))
	}
	return builds, nil
}

// linkAll hard-links (else copies) each binary of builds from the
// directory from into dir; false when one is missing there.
func linkAll(from, dir string, builds []build) bool {
	for _, b := range builds {
		for _, name := range b.names() {
			name = exe(name)
			src, dst := filepath.Join(from, name), filepath.Join(dir, name)
			if err := os.Link(src, dst); err != nil && copyFile(src, dst) != nil {
				return false
			}
		}
	}
	return true
}

// exe is name as an executable's file name.
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// waitFor polls cond until it holds or a minute passes. Wait on an event this
// way, never with a fixed sleep: on a busy machine any fixed sleep is too
// short (docs/architecture.md, "What made tests flaky").
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runTag marks everything this test process makes on a server every run
// on this machine shares (PostgreSQL, MariaDB, Redis, RabbitMQ, MinIO…):
// five random lowercase letters and digits, made once per process. The
// harness puts it at the end of every project name it writes (render), so
// the slices of two runs at once (two sessions, two checkouts, two `make
// test`s) never share a name. Fixed names did: "belongs to another binky
// home". Five characters keep every slice name well inside the tightest
// backend limit (PostgreSQL's 63 bytes; MySQL users are hashed).
var runTag = newRunTag()

func newRunTag() string {
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the platforms binky runs on
	}
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b[:])
}

// runName is base as a project name of this run: base and runTag. render
// leaves a name that already ends in runTag as it is.
func runName(base string) string {
	return base + runTag
}

// projectName finds the project name in a binky.toml: name = "…" in its
// [project] table. It returns the name and the byte offsets of its value,
// or ok false when the file has none.
func projectName(config string) (name string, lo, hi int, ok bool) {
	table, off := "", 0
	for _, line := range strings.SplitAfter(config, "\n") {
		at := off
		off += len(line)
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			table = t
			continue
		}
		if table != "[project]" {
			continue
		}
		m := projectNameRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		return line[m[2]:m[3]], at + m[2], at + m[3], true
	}
	return "", 0, 0, false
}

var projectNameRE = regexp.MustCompile(`^\s*name\s*=\s*"([^"]*)"`)

// render is config as the test writes it: PORTRANGE as the test's port
// range and the project name ending in runTag (runName).
func (e *env) render(config string) string {
	config = strings.ReplaceAll(config, "PORTRANGE", fmt.Sprintf("[%d, %d]", e.rng[0], e.rng[1]))
	if name, lo, hi, ok := projectName(config); ok && !strings.HasSuffix(name, runTag) {
		config = config[:lo] + runName(name) + config[hi:]
	}
	return config
}

// env is one test's world: a BINKY_HOME, a repository, a port range.
type env struct {
	t    *testing.T
	home string
	repo string
	// project is the project name of the binky.toml newEnv wrote, with
	// this run's runTag (render): what the worlds' slices, hostnames and
	// --project flags are named by.
	project string
	rng     [2]int
	extra   []string
	// leases is the machine-wide port lease store this test's daemons
	// share (BINKY_PORT_LEASES): its own, so a test never sees another
	// test's leases, and shared by the homes of a two-home test.
	leases string
	// As another Unix user (users_linux_test.go): userHome is that user's
	// $HOME, and as adjusts each command (binky, git) to run as them.
	userHome string
	as       func(*exec.Cmd)
}

// newEnv makes a BINKY_HOME and a git repository holding config (with
// PORTRANGE replaced by the test's own range) and commits it.
func newEnv(t *testing.T, config string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, home: filepath.Join(base, "home"), repo: filepath.Join(base, "repo"), rng: nextRange(60), leases: filepath.Join(base, "leases")}
	os.MkdirAll(e.repo, 0o755)
	config = e.render(config)
	e.project, _, _, _ = projectName(config)
	if err := os.WriteFile(filepath.Join(e.repo, "binky.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "init")
	t.Cleanup(e.cleanup)
	return e
}

func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "BINKY_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"BINKY_HOME="+e.home,
		"BINKY_PORT_LEASES="+e.leases,
		"BINKY_PROXY_ADDR=127.0.0.1:0",
		"BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=binky", "GIT_AUTHOR_EMAIL=binky@example.invalid",
		"GIT_COMMITTER_NAME=binky", "GIT_COMMITTER_EMAIL=binky@example.invalid",
	)
	if e.userHome != "" {
		// Later entries win: the other user's own HOME, not root's.
		out = append(out, "HOME="+e.userHome)
	}
	return out
}

func (e *env) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.repo
	cmd.Env = e.environ()
	if e.as != nil {
		e.as(cmd)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

// binky runs the CLI in the repository.
func (e *env) binky(args ...string) result {
	return e.binkyIn(e.repo, args...)
}

func (e *env) binkyIn(dir string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), args...)
	cmd.Dir = dir
	cmd.Env = append(e.environ(), e.extra...)
	if e.as != nil {
		e.as(cmd)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("binky %v: %v", args, err)
	}
	return r
}

// must runs the CLI and fails the test on a non-zero exit.
func (e *env) must(args ...string) result {
	e.t.Helper()
	r := e.binky(args...)
	if r.code != 0 {
		e.t.Fatalf("binky %s: exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon log:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr, e.daemonLog())
	}
	return r
}

func (e *env) daemonLog() string {
	b, _ := os.ReadFile(filepath.Join(e.home, "daemon.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// status decodes `binky status --json`.
func (e *env) status() statusJSON {
	e.t.Helper()
	r := e.must("status", "--json")
	var s statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return s
}

// cleanup removes every world (stopping its processes) and the daemon.
func (e *env) cleanup() {
	// Worlds outlive their daemon: a test that stopped it still leaves
	// processes behind, so a registry (not a socket) says there is work.
	if _, err := os.Stat(filepath.Join(e.home, "binky.db")); err != nil {
		return
	}
	r := e.binky("status", "--json")
	var s statusJSON
	if json.Unmarshal([]byte(r.stdout), &s) == nil {
		for _, w := range s.Worlds {
			if r := e.binky("remove", "--force", "-q", "--project", w.Project, w.Worktree); r.code != 0 {
				e.t.Errorf("cleanup: remove %s/%s: exit %d: %s", w.Project, w.Worktree, r.code, r.stderr)
			}
		}
	}
	e.binky("daemon", "stop")
}

type statusJSON struct {
	Worlds []worldJSON `json:"worlds"`
}

type worldJSON struct {
	Project  string        `json:"project"`
	Worktree string        `json:"worktree"`
	Branch   string        `json:"branch"`
	Path     string        `json:"path"`
	State    string        `json:"state"`
	Ports    [2]int        `json:"ports"`
	Services []serviceJSON `json:"services"`
}

type serviceJSON struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	State   string         `json:"state"`
	Pid     int            `json:"pid"`
	Port    int            `json:"port"`
	Ports   map[string]int `json:"ports"`
	URL     string         `json:"url"`
	Address string         `json:"address"`
}

func (s statusJSON) world(t *testing.T, worktree string) worldJSON {
	t.Helper()
	for _, w := range s.Worlds {
		if w.Worktree == worktree {
			return w
		}
	}
	t.Fatalf("no world %q in status: %+v", worktree, s)
	return worldJSON{}
}

func (w worldJSON) service(t *testing.T, name string) serviceJSON {
	t.Helper()
	for _, s := range w.Services {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("world %s has no service %q: %+v", w.Worktree, name, w.Services)
	return serviceJSON{}
}

// homeIDOf is the id of the home at dir (its daemon writes home.id at
// start): the first part of every process marker of that home.
func homeIDOf(dir string) string {
	return strings.TrimSpace(read(filepath.Join(dir, "home.id")))
}

func read(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
