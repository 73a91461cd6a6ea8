//go:build linux

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// Profiles (issue 43): up --profile runs a profile's services and what
// they need, the world keeps that choice, another profile converges,
// --all brings back everything; status and env say what is left out.

const profileWorldBase = `
[project]
name = "prof"
port_range = PORTRANGE

[agents]
expose = ["web", "api"]

[services.db]
adapter = "sqlite"

[services.api]
cmd        = "exec sleep 100621"
depends_on = ["db"]
ports      = ["http"]

[services.web]
cmd   = "exec sleep 100622"
ports = ["http"]

[services.worker]
cmd        = "exec sleep 100623"
depends_on = ["api"]

[profiles.frontend]
services = ["web"]

[profiles.jobs]
services = ["worker"]
`

// leftOut decodes status --json for the services of wt and what status
// says of each: its pid and why it is left out.
func leftOut(t *testing.T, e *env, wt string) (selection string, pids map[string]int, left map[string]string) {
	t.Helper()
	var s struct {
		Worlds []struct {
			Worktree  string `json:"worktree"`
			Selection string `json:"selection"`
			Services  []struct {
				Name    string `json:"name"`
				Pid     int    `json:"pid"`
				LeftOut string `json:"left_out"`
			} `json:"services"`
		} `json:"worlds"`
	}
	out := e.must("status", "--json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	pids, left = map[string]int{}, map[string]string{}
	for _, w := range s.Worlds {
		if w.Worktree != wt {
			continue
		}
		for _, sv := range w.Services {
			pids[sv.Name] = sv.Pid
			if sv.LeftOut != "" {
				left[sv.Name] = sv.LeftOut
			}
		}
		return w.Selection, pids, left
	}
	t.Fatalf("no world %s in status:\n%s", wt, out)
	return "", nil, nil
}

func TestUpProfilesCLI(t *testing.T) {
	e := newEnv(t, profileWorldBase)

	// Two selections at once, and a profile binky.toml lacks, are refused.
	if r := e.binky("up", "-q", "--profile", "frontend", "--only", "web", "w"); r.code == 0 || !strings.Contains(r.stderr, "--profile") {
		t.Errorf("up --profile --only: exit %d, stderr %q; want refused naming the flags", r.code, r.stderr)
	}
	if r := e.binky("up", "-q", "--profile", "backend", "w"); r.code == 0 || !strings.Contains(r.stderr, `no profile "backend"`) {
		t.Errorf("up --profile backend: exit %d, stderr %q; want refused: no such profile", r.code, r.stderr)
	}

	e.must("up", "-q", "--profile", "frontend", "w")
	sel, pids, left := leftOut(t, e, "w")
	if sel != "profile frontend" || pids["web"] == 0 || !alive(pids["web"]) {
		t.Fatalf("after up --profile frontend: selection %q, pids %v; want web running in profile frontend", sel, pids)
	}
	for _, n := range []string{"db", "api", "worker"} {
		if left[n] != "not in profile frontend" {
			t.Errorf("status --json: %s left out %q; want not in profile frontend", n, left[n])
		}
	}
	if out := e.must("status").stdout; !strings.Contains(out, "runs: profile frontend") || !strings.Contains(out, "left out: not in profile frontend") {
		t.Errorf("status does not mark the selection:\n%s", out)
	}
	env := e.must("env", "w")
	if strings.Contains(env.stdout, `"api"`) || !strings.Contains(env.stderr, "api is not running (not in profile frontend)") {
		t.Errorf("env of a world without api: stdout %s stderr %s; want api left out, said so", env.stdout, env.stderr)
	}
	if out := e.must("up", "w").stdout; !strings.Contains(out, "nothing to do") {
		t.Errorf("a plain up keeps the profile and has nothing to do:\n%s", out)
	}

	dry := e.must("up", "--dry-run", "--profile", "jobs", "w").stdout
	for _, want := range []string{"stop      web: not in profile jobs", "start     api:", "start     worker:", "skip      web: not in profile jobs"} {
		if !strings.Contains(dry, want) {
			t.Errorf("up --dry-run --profile jobs does not say %q:\n%s", want, dry)
		}
	}
	e.must("up", "-q", "--profile", "jobs", "w")
	_, after, left := leftOut(t, e, "w")
	if alive(pids["web"]) || after["api"] == 0 || !alive(after["api"]) || after["worker"] == 0 || !alive(after["worker"]) {
		t.Errorf("after switching to jobs: web (pid %d) alive %v, pids %v; want web stopped, api and worker running", pids["web"], alive(pids["web"]), after)
	}
	if left["web"] != "not in profile jobs" {
		t.Errorf("status after switching: web left out %q; want not in profile jobs", left["web"])
	}

	e.must("up", "-q", "--all", "w")
	sel, final, left := leftOut(t, e, "w")
	if sel != "" || len(left) != 0 {
		t.Errorf("after up --all: selection %q, left out %v; want everything", sel, left)
	}
	for _, n := range []string{"api", "web", "worker"} {
		if final[n] == 0 || !alive(final[n]) {
			t.Errorf("after up --all, %s does not run: %v", n, final)
		}
	}
	if final["api"] != after["api"] {
		t.Errorf("up --all restarted api (%d → %d); only web had to start", after["api"], final["api"])
	}
}
