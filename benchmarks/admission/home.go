package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// home is one BINKY_HOME with a repository.
type home struct {
	dir, repo, bin, pressure string
	extra                    []string
}

const config = `[project]
name = "bench"
port_range = [%d, %d]
wake = true

[services.web]
cmd = "%s"
%s
`

func newHome(ctx context.Context, tmp, name, bin string, lo int, cmd, more string, extra ...string) (*home, error) {
	h := &home{dir: filepath.Join(tmp, name, "home"), repo: filepath.Join(tmp, name, "repo"), bin: bin,
		pressure: filepath.Join(tmp, name, "pressure.json")}
	if err := os.MkdirAll(h.repo, 0o755); err != nil {
		return nil, err
	}
	h.extra = append([]string{"BINKY_TEST_PRESSURE=" + h.pressure, "BINKY_TEST_PRESSURE_INTERVAL=50ms"}, extra...)
	if err := h.setRAM(80); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(h.repo, "binky.toml"), fmt.Appendf(nil, config, lo, lo+999, cmd, more), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		c := exec.CommandContext(ctx, "git", args...)
		c.Dir, c.Env = h.repo, h.env()
		if out, err := c.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git %v: %v %s", args, err, out)
		}
	}
	return h, nil
}

func (h *home) setRAM(pct float64) error {
	b, _ := json.Marshal(map[string]float64{"mem_total": 16e9, "mem_available": 16e9 * pct / 100, "disk_total": 1e12, "disk_free": 5e11})
	if err := os.WriteFile(h.pressure+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(h.pressure+".tmp", h.pressure)
}

func (h *home) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BINKY_") {
			out = append(out, kv)
		}
	}
	return append(append(out, "BINKY_HOME="+h.dir, "BINKY_PROXY_ADDR=127.0.0.1:0", "BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.invalid",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.invalid"), h.extra...)
}

func (h *home) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, filepath.Join(h.bin, "binky"), args...)
	c.Dir, c.Env = h.repo, h.env()
	return c
}

func (h *home) must(ctx context.Context, args ...string) (string, error) {
	out, err := h.cmd(ctx, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("binky %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", err
	}
	return string(out), nil
}

// close removes every world and stops the daemon.
func (h *home) close() {
	ctx := context.Background()
	out, _ := h.cmd(ctx, "status", "--json").Output()
	var s struct{ Worlds []struct{ Worktree string } }
	json.Unmarshal(out, &s)
	for _, w := range s.Worlds {
		h.cmd(ctx, "remove", "--force", "-q", w.Worktree).Run()
	}
	h.cmd(ctx, "daemon", "stop").Run()
}

// event is one events.log line.
type event struct {
	TS       time.Time `json:"ts"`
	Event    string    `json:"event"`
	Worktree string    `json:"worktree"`
}

func (h *home) events() ([]event, error) {
	f, err := os.Open(filepath.Join(h.dir, "events.log"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
