package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// reupResult holds the re-up medians.
type reupResult struct {
	python time.Duration // python alone: spawn to first answer
	up     time.Duration // binky up of the down world
	answer time.Duration // up's start to the web's first answer
	lag    time.Duration // the web's first answer to up returning
}

// reup times re-ups of a world whose web is python3 -m http.server, in its
// own project next to the sleeping worlds.
func reup(ctx context.Context, o options, bin, work string) (*reupResult, error) {
	w := &world{bin: bin, home: filepath.Join(work, "home"), repo: filepath.Join(work, "web")}
	if err := os.MkdirAll(w.repo, 0o755); err != nil {
		return nil, err
	}
	conf := "[project]\nname = \"clibenchweb\"\n\n[agents]\nexpose = [\"web\"]\n\n[services.web]\n" +
		"cmd = \"exec python3 -m http.server ${self.port} --bind 127.0.0.1\"\n" +
		"url = \"web\"\nhealth = \"http://127.0.0.1:${self.port}/\"\n"
	if err := os.WriteFile(filepath.Join(w.repo, "binky.toml"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if err := w.run("git", args...); err != nil {
			return nil, err
		}
	}
	const wt = "web-1"
	if err := w.run(bin, "up", "-q", wt); err != nil {
		return nil, err
	}
	defer w.run(bin, "remove", "-q", "--force", wt)
	port, err := w.port(wt)
	if err != nil {
		return nil, err
	}
	var ups, answers, lags, pythons []time.Duration
	for i := -1; i < o.reups; i++ { // one warm-up
		if err := w.run(bin, "down", "-q", wt); err != nil {
			return nil, err
		}
		start := time.Now()
		first := pollFirstAnswer(ctx, port, start)
		if err := w.run(bin, "up", "-q", wt); err != nil {
			return nil, err
		}
		end := time.Now()
		at := <-first
		if i < 0 {
			continue
		}
		ups = append(ups, end.Sub(start))
		if !at.IsZero() {
			answers = append(answers, at.Sub(start))
			lags = append(lags, end.Sub(at))
		}
	}
	// Python alone, on a port of its own.
	for i := -1; i < o.reups; i++ {
		d, err := pythonAlone(ctx, port+1)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			pythons = append(pythons, d)
		}
	}
	return &reupResult{python: med(pythons), up: med(ups), answer: med(answers), lag: med(lags)}, nil
}

func med(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// port is the web service's port, from binky env --direct (service →
// http://127.0.0.1:<port>).
func (w *world) port(wt string) (int, error) {
	cmd := exec.Command(w.bin, "env", "--direct", wt)
	cmd.Dir, cmd.Env = w.repo, w.environ()
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("binky env --direct %s: %v", wt, err)
	}
	var env map[string]string
	if err := json.Unmarshal(out, &env); err != nil {
		return 0, fmt.Errorf("binky env --direct: %v", err)
	}
	u, err := url.Parse(env["web"])
	if err != nil || u.Port() == "" {
		return 0, fmt.Errorf("no port for web in binky env --direct: %s", out)
	}
	return strconv.Atoi(u.Port())
}

// pollFirstAnswer asks 127.0.0.1:port for an HTTP answer every millisecond
// from start and sends the time of the first (zero after 30 s).
func pollFirstAnswer(ctx context.Context, port int, start time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		c := &http.Client{Timeout: 200 * time.Millisecond}
		addr := fmt.Sprintf("http://127.0.0.1:%d/", port)
		for time.Since(start) < 30*time.Second && ctx.Err() == nil {
			resp, err := c.Get(addr)
			if err == nil {
				at := time.Now()
				resp.Body.Close()
				ch <- at
				return
			}
			time.Sleep(time.Millisecond)
		}
		ch <- time.Time{}
	}()
	return ch
}

// pythonAlone spawns python3 -m http.server and returns the time to its
// first answer.
func pythonAlone(ctx context.Context, port int) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "python3", "-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1")
	cmd.Dir = os.TempDir()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	at := <-pollFirstAnswer(ctx, port, start)
	if at.IsZero() {
		return 0, fmt.Errorf("python3 -m http.server on port %d never answered", port)
	}
	return at.Sub(start), nil
}
