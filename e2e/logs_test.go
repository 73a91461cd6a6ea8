package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogs: `binky logs` prints a service's last lines, all services
// prefixed by name, and -f keeps following.
func TestLogs(t *testing.T) {
	e := newEnv(t, `
[project]
name = "chatty"
port_range = PORTRANGE

[services.talker]
cmd = "for i in 1 2 3 4 5; do echo line $i; done; while true; do echo tick; sleep 0.2; done"

[services.quiet]
cmd = "echo hello from quiet; exec sleep 600"
`)
	e.must("up", "-q", "talk")
	var out string
	waitFor(t, "the talker's first lines", func() bool {
		out = e.must("logs", "talk", "talker", "-n", "0").stdout
		return strings.Contains(out, "line 5\n")
	})
	if !strings.HasPrefix(out, "line 1\nline 2\nline 3\nline 4\nline 5\n") {
		t.Errorf("logs talker:\n%s", out)
	}
	if out := e.must("logs", "talk", "talker", "-n", "2").stdout; strings.Count(out, "\n") != 2 {
		t.Errorf("logs -n 2 printed %q", out)
	}
	if out := e.must("logs", "talk").stdout; !strings.Contains(out, "quiet | hello from quiet") || !strings.Contains(out, "talker | ") {
		t.Errorf("logs of all services:\n%s", out)
	}
	if r := e.binky("logs", "talk", "nope"); r.code == 0 || !strings.Contains(r.stderr, "talker, quiet") {
		t.Errorf("logs of an unknown service: exit %d %q", r.code, r.stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), "logs", "-f", "-n", "1", "talk", "talker")
	cmd.Dir = e.repo
	cmd.Env = e.environ()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	ticks := 0
	for ticks < 4 && sc.Scan() {
		if sc.Text() == "tick" {
			ticks++
		}
	}
	if ticks < 4 {
		t.Errorf("logs -f saw %d new ticks; want it to keep following", ticks)
	}
}

// TestLogsServiceHere (issue 40): inside a worktree, `binky logs <svc>`
// is that service of the world you stand in; --since and --timestamps
// date the lines, and --json carries the time.
func TestLogsServiceHere(t *testing.T) {
	e := newEnv(t, `
[project]
name = "here"
port_range = PORTRANGE

[services.quiet]
cmd = "echo hello from quiet; exec sleep 600"

[services.other]
cmd = "echo other says hi; exec sleep 600"
`)
	e.must("up", "-q", "feat/h")
	wt := e.status().world(t, "feat-h").Path
	var out string
	waitFor(t, "the quiet service's line", func() bool {
		out = e.binkyIn(wt, "logs", "quiet").stdout
		return strings.Contains(out, "hello from quiet")
	})
	if out != "hello from quiet\n" {
		t.Errorf("logs quiet inside the worktree: %q; want the quiet service's line alone", out)
	}
	r := e.binkyIn(wt, "logs", "--since", "10m", "-t", "quiet")
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d) hello from quiet\n$`).MatchString(r.stdout) {
		t.Errorf("logs --since 10m -t quiet: %q (stderr %q); want the line with its time", r.stdout, r.stderr)
	}
	r = e.binkyIn(wt, "logs", "--json", "other")
	if !strings.Contains(r.stdout, `"service":"other","time":"`) || !strings.Contains(r.stdout, `"line":"other says hi"`) {
		t.Errorf("logs --json other: %q; want the line with its time", r.stdout)
	}
	if r := e.binkyIn(wt, "logs", "nosuch"); r.code == 0 {
		t.Errorf("logs nosuch inside the worktree exited 0: %q", r.stdout)
	}
}
