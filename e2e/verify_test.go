package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyRecordsAndGoesStale: verify runs every check with the exposed
// coordinates, exits non-zero on a failure, and status shows the last run,
// stale once HEAD moves.
func TestVerifyRecordsAndGoesStale(t *testing.T) {
	e := newEnv(t, `
[project]
name = "gate"
port_range = PORTRANGE

[services.web]
cmd    = "exec sleep 600"
url    = "web"
health = { exec = "true" } # it listens on nothing: without this, its port is its probe

[agents]
expose = ["web"]
verify = [
  "test -n \"$BINKY_WEB_URL\" && echo web is $BINKY_WEB_URL",
  "echo \"$BINKY_ENV_JSON\" | grep -q '\"web\"'",
  "test -f ok.flag || { echo missing ok.flag >&2; exit 7; }",
]
`)
	e.must("up", "-q", "check/me")
	w := e.status().world(t, worldOf(t, e, "check/me"))

	r := e.binky("verify", "check/me")
	if r.code == 0 {
		t.Fatalf("verify with a failing check exited 0")
	}
	if !strings.Contains(r.stdout, "web is http://web.") || !strings.Contains(r.stderr, "missing ok.flag") {
		t.Errorf("verify output not streamed:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "FAIL") || !strings.Contains(r.stderr, "exit 7") {
		t.Errorf("verify does not name the failed check:\n%s", r.stderr)
	}
	v := lastVerify(t, e, w.Worktree)
	if v.Passed || len(v.Checks) != 3 || !v.Checks[0].Passed || !v.Checks[1].Passed || v.Checks[2].ExitCode != 7 {
		t.Errorf("recorded run %+v; want checks ok, ok, exit 7", v)
	}

	os.WriteFile(filepath.Join(w.Path, "ok.flag"), nil, 0o644)
	runGit(t, e, w.Path, "add", "ok.flag")
	runGit(t, e, w.Path, "commit", "-q", "-m", "flag")
	if r := e.binky("verify", "--json", "check/me"); r.code != 0 {
		t.Fatalf("verify after the fix: exit %d\n%s", r.code, r.stderr)
	}
	v = lastVerify(t, e, w.Worktree)
	if !v.Passed || v.Stale {
		t.Errorf("after a passing verify: %+v", v)
	}
	os.WriteFile(filepath.Join(w.Path, "more.txt"), []byte("x"), 0o644)
	runGit(t, e, w.Path, "add", "more.txt")
	runGit(t, e, w.Path, "commit", "-q", "-m", "more")
	if v = lastVerify(t, e, w.Worktree); !v.Stale {
		t.Errorf("verify recorded before a new commit is not stale: %+v", v)
	}
	if out := e.must("status").stdout; !strings.Contains(out, "verify passed") || !strings.Contains(out, "stale") {
		t.Errorf("status does not show the stale verify:\n%s", out)
	}
}

type verifyJSON struct {
	Passed bool   `json:"passed"`
	Commit string `json:"commit"`
	Stale  bool   `json:"stale"`
	Checks []struct {
		Cmd      string `json:"cmd"`
		ExitCode int    `json:"exit_code"`
		Passed   bool   `json:"passed"`
	} `json:"checks"`
}

func lastVerify(t *testing.T, e *env, worktree string) verifyJSON {
	t.Helper()
	var s struct {
		Worlds []struct {
			Worktree string      `json:"worktree"`
			Verify   *verifyJSON `json:"verify"`
		} `json:"worlds"`
	}
	if err := json.Unmarshal([]byte(e.must("status", "--json").stdout), &s); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Worlds {
		if w.Worktree == worktree && w.Verify != nil {
			return *w.Verify
		}
	}
	t.Fatalf("no verify recorded for %s", worktree)
	return verifyJSON{}
}

func runGit(t *testing.T, e *env, dir string, args ...string) {
	t.Helper()
	old := e.repo
	e.repo = dir
	defer func() { e.repo = old }()
	e.git(args...)
}
