package main

import (
	"github.com/binkyhq/binky/cmd/internal/cli"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/config"
)

// runCaptured runs the CLI in-process with stdout and stderr captured.
func runCaptured(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	oldOut, oldErr := os.Stdout, os.Stderr
	defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout, os.Stderr = outW, errW
	outC, errC := make(chan string), make(chan string)
	go func() { b, _ := io.ReadAll(outR); outC <- string(b) }()
	go func() { b, _ := io.ReadAll(errR); errC <- string(b) }()
	code = run(append([]string{"--home", t.TempDir()}, args...))
	outW.Close()
	errW.Close()
	return code, <-outC, <-errC
}

const checkValid = `[project]
name = "acme"

[services.db]
adapter   = "postgres"
admin_url = "${env.PG_ADMIN_URL}"
migrate   = "migrate ${self.url}"

[services.api]
cmd        = "api --port ${self.port}"
url        = "api"
depends_on = ["db"]
`

// checkRepo makes a repository holding binky.toml with src, and a subdir.
func checkRepo(t *testing.T, src string) (repo, file string) {
	t.Helper()
	repo = t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(repo, "binky.toml")
	if src != "" {
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo, file
}

var diagLine = regexp.MustCompile(`^.+:\d+: (error|warning): .+$`)

func TestCheckExitStatus(t *testing.T) {
	_, valid := checkRepo(t, checkValid)
	validRepo := filepath.Dir(valid)
	_, warn := checkRepo(t, checkValid+"\n[services.worker]\ncmd = \"w --port ${self.port}\"\n")
	_, bad := checkRepo(t, checkValid+"\n[services.worker]\ncomand = \"w\"\n")
	_, notTOML := checkRepo(t, "[project\nname = 1\n")
	emptyRepo, _ := checkRepo(t, "")
	tests := []struct {
		name      string
		args      []string
		want      int
		stdout    []string // substrings of stdout, each on its own line
		stderr    string   // substring of stderr
		emptyOut  bool
		wantLines int // diagnostic lines on stdout, -1 to skip
	}{
		{"valid file", []string{"check", valid}, 0, nil, "ok", true, 0},
		{"valid from a subdirectory", []string{"check", filepath.Join(validRepo, "sub", "dir")}, 0, nil, "ok", true, 0},
		{"warnings only", []string{"check", warn}, 0, []string{`:15: warning: ${self.port}: services.worker asks for no port`}, "0 errors, 1 warning", false, 1},
		{"errors", []string{"check", bad}, 1, []string{`:14: error: services.worker sets neither cmd nor adapter`, `:15: error: unknown key "comand" in [services.worker] (did you mean "cmd"?)`}, "2 errors, 0 warnings", false, 2},
		{"not TOML", []string{"check", notTOML}, 2, nil, "binky.toml:2:9: not valid TOML", true, 0},
		{"missing file", []string{"check", filepath.Join(emptyRepo, "nope.toml")}, 2, nil, "cannot read", true, 0},
		{"no binky.toml up to the repo root", []string{"check", filepath.Join(emptyRepo, "sub")}, 2, nil, "repository root", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCaptured(t, tt.args...)
			if code != tt.want {
				t.Errorf("exit %d; want %d (stdout %q, stderr %q)", code, tt.want, out, errOut)
			}
			if tt.emptyOut && out != "" {
				t.Errorf("stdout %q; want empty", out)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout %q; want it to contain %q", out, s)
				}
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q; want it to contain %q", errOut, tt.stderr)
			}
			if out != "" {
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(lines) != tt.wantLines {
					t.Errorf("got %d lines on stdout; want %d", len(lines), tt.wantLines)
				}
				for _, l := range lines {
					if !diagLine.MatchString(l) {
						t.Errorf("stdout line %q is not file:line: severity: message", l)
					}
				}
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	_, valid := checkRepo(t, checkValid)
	_, bad := checkRepo(t, checkValid+"\n[services.worker]\ncmd = \"w\"\ndepends_on = [\"dbb\"]\n")
	_, notTOML := checkRepo(t, "[project]\nname = \"a\"\nname = \"b\"\n")
	tests := []struct {
		name string
		path string
		want int
		diag []config.Diagnostic
	}{
		{"clean", valid, 0, []config.Diagnostic{}},
		{"errors", bad, 1, []config.Diagnostic{{File: bad, Line: 16, Col: 15, Severity: "error",
			Message: `services.worker depends on "dbb", which is not a service`, Hint: `did you mean "db"?`}}},
		{"not TOML", notTOML, 2, []config.Diagnostic{{File: notTOML, Line: 3, Col: 12, Severity: "error",
			Message: "not valid TOML: Key 'project.name' has already been defined.", Hint: "a key or table may appear once: merge or remove the repeat"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCaptured(t, "check", "--json", tt.path)
			if code != tt.want {
				t.Errorf("exit %d; want %d", code, tt.want)
			}
			var got []config.Diagnostic
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("stdout %q is not a JSON array: %v", out, err)
			}
			if len(got) != len(tt.diag) {
				t.Fatalf("got %d diagnostics %+v; want %d", len(got), got, len(tt.diag))
			}
			for i := range got {
				if got[i] != tt.diag[i] {
					t.Errorf("got %#v; want %#v", got[i], tt.diag[i])
				}
			}
		})
	}
}

// TestCheckDefaultPath: with no PATH, check searches up from the current
// directory and shows the file relative to it.
func TestCheckDefaultPath(t *testing.T) {
	repo, _ := checkRepo(t, checkValid+"\n[services.worker]\ncmd = \"w ${self.port}\"\n")
	t.Chdir(filepath.Join(repo, "sub", "dir"))
	code, out, _ := runCaptured(t, "check")
	if code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	want := filepath.Join("..", "..", "binky.toml") + ":15: warning:"
	if !strings.HasPrefix(out, filepath.Join(repo, "binky.toml")+":15: warning:") && !strings.HasPrefix(out, want) {
		t.Errorf("stdout %q; want it to name the found file", out)
	}
	t.Chdir(repo)
	if _, out, _ = runCaptured(t, "check"); !strings.HasPrefix(out, "binky.toml:15: warning:") {
		t.Errorf("stdout %q; want the path relative to the current directory", out)
	}
}

// TestCheckInterrupted: check stops when its context ends (SIGINT or
// SIGTERM through main's signal.NotifyContext) instead of finishing the
// parse, and says so.
func TestCheckInterrupted(t *testing.T) {
	_, file := checkRepo(t, checkValid)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	err := (&checkCmd{Check: cli.Check{Path: file}}).run(ctx, &out, &errOut)
	var ee *exitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("got %v; want exit 2 saying interrupted", err)
	}
	if out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("stdout %q stderr %q; want nothing printed", out.String(), errOut.String())
	}
}

// TestCheckTooDeep: the 16 KB file nested 4,000 deep is refused
// with its file and line, exit 2.
func TestCheckTooDeep(t *testing.T) {
	_, file := checkRepo(t, checkValid+"\n[services.api.env]\nX = "+strings.Repeat("{a=", 4000)+"1"+strings.Repeat("}", 4000)+"\n")
	code, out, errOut := runCaptured(t, "check", file)
	if code != 2 || out != "" || !strings.Contains(errOut, "binky.toml:15:") || !strings.Contains(errOut, "nested deeper than") {
		t.Errorf("exit %d stdout %q stderr %q; want exit 2 and binky.toml:15: … nested deeper than …", code, out, errOut)
	}
}

// TestCheckTargetWindows: check --target windows reports what cmd.exe
// reads differently, with the line, and fails on a multi-line command;
// the shipped demo is clean.
func TestCheckTargetWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows every check reports these (TestCheckWindows in host/config)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "binky.toml")
	os.WriteFile(file, []byte("[project]\nname = \"p\"\n\n[services.web]\ncmd = \"serve --name '${worktree.name}'\"\nurl = \"web\"\n\n[agents]\nverify = [\"\"\"\nfirst\nsecond\"\"\"]\n"), 0o644)
	var out, errOut bytes.Buffer
	if err := (&checkCmd{Check: cli.Check{Path: file}}).run(context.Background(), &out, &errOut); err != nil {
		t.Fatalf("check without --target: %v\n%s", err, out.String())
	}
	out.Reset()
	err := (&checkCmd{Check: cli.Check{Path: file, Target: "windows"}}).run(context.Background(), &out, &errOut)
	var ee *exitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("check --target windows = %v; want exit 1\n%s", err, out.String())
	}
	for _, w := range []string{`binky.toml:5: warning: services.web.cmd quotes '${worktree.name}' with single quotes`, `(write "${worktree.name}"`, "binky.toml:9: error: agents.verify[0] has 2 lines"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("check --target windows lacks %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	if err := (&checkCmd{Check: cli.Check{Path: filepath.Join("..", "..", "examples", "demo", "binky.toml"), Target: "windows"}}).run(context.Background(), &out, &errOut); err != nil || out.Len() > 0 {
		t.Errorf("check --target windows of the demo = %v:\n%s", err, out.String())
	}
}
