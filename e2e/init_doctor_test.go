package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir holds the compose projects host/compose tests against (the
// shared real-world set; overrides-literals, which plants sentinel secrets
// as literals in compose files and an override file as well; and issue
// 27's old formats, literal values and interpolation forms).
const fixtureDir = "../host/compose/testdata/fixtures"

// sentinel is in every secret value the fixtures plant.
const sentinel = "SENTINEL"

// composeEnv is an env whose repository holds a copy of one compose
// fixture (and no binky.toml), committed.
func composeEnv(t *testing.T, fixture string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, home: filepath.Join(base, "home"), repo: filepath.Join(base, "repo"), rng: nextRange(10)}
	if err := os.CopyFS(e.repo, os.DirFS(filepath.Join(fixtureDir, fixture))); err != nil {
		t.Fatalf("copy fixture %s: %v", fixture, err)
	}
	planted := false
	filepath.WalkDir(e.repo, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(read(p), sentinel) {
			planted = true
		}
		return nil
	})
	if !planted {
		t.Fatalf("fixture %s plants no %s secret: the secret check below would prove nothing", fixture, sentinel)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "compose project")
	t.Cleanup(e.cleanup)
	return e
}

// noSentinel fails the test when a fixture's secret reached out.
func noSentinel(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.Index(out, sentinel); i >= 0 {
		lo, hi := max(0, i-60), min(len(out), i+60)
		t.Errorf("%s carries a planted secret: …%s…", what, out[lo:hi])
	}
}

// checkClean runs binky check --json on the repository's binky.toml and
// fails on any error diagnostic.
func checkClean(t *testing.T, e *env) {
	t.Helper()
	r := e.binky("check", "--json")
	var ds []struct {
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Line     int    `json:"line"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ds); err != nil {
		t.Fatalf("binky check --json: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	for _, d := range ds {
		if d.Severity == "error" {
			t.Errorf("binky check: line %d: %s", d.Line, d.Message)
		}
	}
	if r.code != 0 {
		t.Errorf("binky check: exit %d; want 0\n%s\nbinky.toml:\n%s", r.code, r.stderr, read(filepath.Join(e.repo, "binky.toml")))
	}
}

// TestInitEveryFixture: for each compose fixture, binky init writes a
// binky.toml that binky check passes with no errors, and no planted secret
// reaches the file or init's output.
func TestInitEveryFixture(t *testing.T) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("no fixtures in %s", fixtureDir)
	}
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		t.Run(ent.Name(), func(t *testing.T) {
			t.Parallel()
			e := composeEnv(t, ent.Name())
			r := e.binky("init")
			if r.code != 0 {
				t.Fatalf("binky init: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			file := read(filepath.Join(e.repo, "binky.toml"))
			if !strings.Contains(file, "[project]") {
				t.Fatalf("binky.toml has no [project] table:\n%s", file)
			}
			noSentinel(t, "binky.toml", file)
			noSentinel(t, "init's stdout", r.stdout)
			noSentinel(t, "init's stderr", r.stderr)
			checkClean(t, e)
		})
	}
}

// TestInitFlags: a second init refuses to overwrite, --force does,
// --stdout prints without writing, --json parses; no output of any of
// them carries a planted secret.
func TestInitFlags(t *testing.T) {
	e := composeEnv(t, "overrides-literals")
	path := filepath.Join(e.repo, "binky.toml")
	r := e.binky("init")
	if r.code != 0 {
		t.Fatalf("binky init: exit %d\n%s", r.code, r.stderr)
	}
	generated := read(path)

	const edited = "# edited by hand\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.binky("init")
	if r.code == 0 {
		t.Errorf("second binky init: exit 0; want a refusal")
	}
	if !strings.Contains(r.stderr, "--force") {
		t.Errorf("second binky init says %q; want it to name --force", r.stderr)
	}
	if got := read(path); got != edited {
		t.Errorf("refused init changed binky.toml to:\n%s", got)
	}

	r = e.binky("init", "--stdout")
	if r.code != 0 {
		t.Fatalf("binky init --stdout: exit %d\n%s", r.code, r.stderr)
	}
	if r.stdout != generated {
		t.Errorf("init --stdout printed:\n%s\nwant what init wrote:\n%s", r.stdout, generated)
	}
	if got := read(path); got != edited {
		t.Errorf("init --stdout wrote binky.toml:\n%s", got)
	}
	noSentinel(t, "init --stdout", r.stdout+r.stderr)

	r = e.binky("init", "--stdout", "--json")
	var js struct {
		Project  string            `json:"project"`
		File     string            `json:"file"`
		TOML     string            `json:"toml"`
		Adapters []json.RawMessage `json:"adapters"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatalf("init --stdout --json: exit %d: %v\n%s", r.code, err, r.stdout)
	}
	if js.TOML != generated || js.File != "" || js.Project == "" || len(js.Adapters) == 0 {
		t.Errorf("init --stdout --json = project %q file %q %d adapters, toml equal %v; want the project, no file, the adapters and the toml",
			js.Project, js.File, len(js.Adapters), js.TOML == generated)
	}
	noSentinel(t, "init --stdout --json", r.stdout+r.stderr)
	if got := read(path); got != edited {
		t.Errorf("init --stdout --json wrote binky.toml:\n%s", got)
	}

	r = e.binky("init", "--force", "--json")
	js = struct {
		Project  string            `json:"project"`
		File     string            `json:"file"`
		TOML     string            `json:"toml"`
		Adapters []json.RawMessage `json:"adapters"`
	}{}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || r.code != 0 {
		t.Fatalf("init --force --json: exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if !strings.HasSuffix(js.File, "binky.toml") || js.TOML != "" {
		t.Errorf("init --force --json: file %q, toml %d bytes; want the file written and no toml", js.File, len(js.TOML))
	}
	if got := read(path); got != generated {
		t.Errorf("init --force left binky.toml as:\n%s\nwant:\n%s", got, generated)
	}
	noSentinel(t, "init --force --json", r.stdout+r.stderr)
	checkClean(t, e)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if r = e.binky("init", "--stdout"); r.code != 0 {
		t.Fatalf("binky init --stdout without a binky.toml: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("init --stdout created %s (stat: %v)", path, err)
	}
}

// finding is one entry of binky doctor --json.
type finding struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// doctorEnv is an env with no repository, whose PATH holds extra (when
// given), the built binaries and the system's directories (and git's), so
// a stray adapter elsewhere on the caller's PATH cannot change the result.
func doctorEnv(t *testing.T, extra string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, home: filepath.Join(base, "home"), repo: base, rng: nextRange(10)}
	path := []string{binDir, "/usr/local/bin", "/usr/bin", "/bin"}
	if git, err := exec.LookPath("git"); err == nil {
		path = append(path, filepath.Dir(git))
	}
	if extra != "" {
		path = append([]string{extra}, path...)
	}
	e.extra = []string{"PATH=" + strings.Join(path, string(os.PathListSeparator))}
	return e
}

func (e *env) doctorJSON() ([]finding, result) {
	e.t.Helper()
	r := e.binky("doctor", "--json")
	var fs []finding
	if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
		e.t.Fatalf("binky doctor --json: exit %d: %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	if len(fs) == 0 {
		e.t.Fatalf("binky doctor --json printed no findings")
	}
	for _, f := range fs {
		if (f.Status == "warn" || f.Status == "fail") && f.Fix == "" {
			e.t.Errorf("doctor finding %s/%s %q has no fix", f.Check, f.Status, f.Message)
		}
	}
	return fs, r
}

// TestDoctorFreshHome: on a BINKY_HOME that does not exist, doctor finds
// nothing wrong (warnings about the machine are allowed: only failures
// make it exit non-zero), its JSON parses with a fix for every warning,
// and it does not create the home.
func TestDoctorFreshHome(t *testing.T) {
	e := doctorEnv(t, "")
	r := e.binky("doctor")
	if r.code != 0 {
		t.Errorf("binky doctor on a fresh home: exit %d; want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	fs, r := e.doctorJSON()
	for _, f := range fs {
		if f.Status == "fail" {
			t.Errorf("doctor on a fresh home fails %s: %s", f.Check, f.Message)
		}
	}
	if r.code != 0 {
		t.Errorf("binky doctor --json on a fresh home: exit %d; want 0", r.code)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("doctor created %s (stat: %v); it must change nothing", e.home, err)
	}
}

// TestDoctorCorruptRegistry: a binky.db that is not a database makes
// doctor exit non-zero, naming the registry.
func TestDoctorCorruptRegistry(t *testing.T) {
	e := doctorEnv(t, "")
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(e.home, "binky.db")
	garbage := strings.Repeat("this is not an SQLite database. ", 200)
	if err := os.WriteFile(db, []byte(garbage), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.binky("doctor")
	if r.code == 0 {
		t.Errorf("binky doctor with a corrupt registry: exit 0; want non-zero\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "registry") || !strings.Contains(r.stdout, db) {
		t.Errorf("binky doctor output does not name the registry %s:\n%s", db, r.stdout)
	}
	fs, r := e.doctorJSON()
	if r.code == 0 {
		t.Errorf("binky doctor --json with a corrupt registry: exit 0; want non-zero")
	}
	failed := false
	for _, f := range fs {
		if f.Check == "registry" && f.Status == "fail" {
			failed = true
		}
	}
	if !failed {
		t.Errorf("doctor --json has no failed registry finding: %+v", fs)
	}
	if got := read(db); got != garbage {
		t.Errorf("doctor changed the corrupt registry file")
	}
}

// TestDoctorHungAdapter: an adapter on PATH that never answers describe is
// named as hung, and doctor exits non-zero.
func TestDoctorHungAdapter(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep(1)")
	}
	dir := t.TempDir()
	// Written under another name, closed and only then renamed into place:
	// nothing may exec a file still open for writing ("text file busy").
	tmp := filepath.Join(dir, ".tmp-adapter")
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\nexec "+sleep+" 60\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "binky-adapter-hang")); err != nil {
		t.Fatal(err)
	}
	e := doctorEnv(t, dir)
	fs, r := e.doctorJSON()
	if r.code == 0 {
		t.Errorf("binky doctor with a hung adapter: exit 0; want non-zero")
	}
	found := false
	for _, f := range fs {
		if f.Check == "adapters" && f.Status == "fail" && strings.Contains(f.Message, "adapter hang ") && strings.Contains(f.Message, "hung") {
			found = true
		}
	}
	if !found {
		t.Errorf("doctor --json does not name adapter hang as hung: %+v", fs)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("doctor created %s (stat: %v)", e.home, err)
	}
}
