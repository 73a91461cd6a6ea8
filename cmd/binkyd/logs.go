package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/supervisor"
	"github.com/binkyhq/binky/host/world"
)

type logsCmd struct{ cli.Logs }

// statusCaller is what logs asks of the daemon.
type statusCaller interface {
	Call(ctx context.Context, op string, args any, h api.Handlers, out any) error
}

// logsDaemon reaches home's daemon, starting it when none runs; a seam for
// tests.
var logsDaemon = func(g *globals) (statusCaller, error) {
	cl, err := g.client()
	if err != nil {
		return nil, err
	}
	return cl, nil
}

func (c *logsCmd) Run(g *globals) error {
	return c.run(g, os.Stdout, os.Stderr)
}

// run is Run writing to stdout, and to stderr a note when it had to read
// the registry itself (see logs_readonly.go).
func (c *logsCmd) run(g *globals, stdout, stderr io.Writer) error {
	since, err := parseSince(c.Since, time.Now())
	if err != nil {
		return &exitError{Code: 2, Err: fmt.Errorf("logs: %w", err)}
	}
	n := c.Lines
	if n < 0 { // not given: 100, or every line since
		n = 100
		if !since.IsZero() {
			n = 0
		}
	}
	// Lines are dated from the log's time marks (supervisor.ReadLogLines)
	// only when asked: it reads the whole of each file it needs.
	dated := c.Timestamps || c.JSON || !since.IsZero()
	w, readOnly, err := c.world(g, stderr)
	if err != nil {
		return err
	}
	dir := logview.Dir(g.home, w.Project, w.Worktree)
	var services []string
	// [worktree] setup logs as the "setup" service (docs/warm.md).
	_, setupErr := os.Stat(filepath.Join(dir, "setup.log"))
	hasSetup := setupErr == nil
	if c.Service != "" {
		found := c.Service == "setup" && hasSetup
		for _, s := range w.Services {
			found = found || s.Name == c.Service
		}
		if !found {
			var have []string
			for _, s := range w.Services {
				have = append(have, s.Name)
			}
			if hasSetup {
				have = append(have, "setup")
			}
			return &exitError{Code: 1, Err: fmt.Errorf("logs: %s/%s has no service %q (it has: %s)", w.Project, w.Worktree, c.Service, strings.Join(have, ", "))}
		}
		services = []string{c.Service}
	} else {
		for _, s := range w.Services {
			services = append(services, s.Name)
		}
		if hasSetup && !slices.Contains(services, "setup") {
			services = append(services, "setup")
		}
		sort.Strings(services)
	}
	red, degraded, err := redactorFor(g.ctx, g.home, readOnly)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("logs: %w", err)}
	}
	if degraded != nil {
		fmt.Fprintf(stderr, "binky: logs: the registry cannot be written (%v); read it read-only to redact\n", degraded)
	}
	if c.Browser {
		return c.browser(g.ctx, stdout, stderr, w, dir, n, since, red)
	}
	prefix := len(services) > 1
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	print := func(svc string, l supervisor.Line) error {
		mu.Lock()
		defer mu.Unlock()
		stamp := ""
		if !l.Time.IsZero() {
			stamp = l.Time.Format(time.RFC3339)
		}
		if c.JSON {
			return enc.Encode(logLine{Project: w.Project, Worktree: w.Worktree, Service: svc, Time: stamp, Line: l.Text})
		}
		line := l.Text
		if c.Timestamps && stamp != "" {
			line = stamp + " " + line
		}
		if prefix {
			_, err := fmt.Fprintf(stdout, "%s | %s\n", svc, line)
			return err
		}
		_, err := fmt.Fprintln(stdout, line)
		return err
	}
	if !c.Follow {
		for _, svc := range services {
			lines, err := readLines(filepath.Join(dir, svc+".log"), n, since, dated, red)
			if err != nil {
				return err
			}
			for _, l := range lines {
				if err := print(svc, l); err != nil {
					return err
				}
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(services))
	for i, svc := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = followRedacted(ctx, filepath.Join(dir, svc+".log"), n, since, red, func(l supervisor.Line) error { return print(svc, l) })
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && g.ctx.Err() == nil {
		return err
	}
	return nil
}

// quietFlush is how long a followed log may stay quiet before the redactor
// writes out a line it holds back (one ending in what may begin a secret
// that the next line would finish).
const quietFlush = 500 * time.Millisecond

// world asks the daemon which world the arguments name. When no daemon
// answers and none can start (a daemon cannot start on a full disk), it
// finds the world, by the daemon's rules (world.Find), in binky.db opened
// read-only, and returns the redactor of what that registry records too.
func (c *logsCmd) world(g *globals, stderr io.Writer) (api.World, *redact.Redactor, error) {
	ref := cli.WorldRef(c.Worktree, c.Project)
	cl, err := logsDaemon(g)
	if err == nil {
		var res api.StatusResult
		err = cl.Call(g.ctx, api.OpStatus, api.StatusArgs{WorldRef: ref, Here: c.Worktree == ""}, api.Handlers{}, &res)
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeNotFound && c.Worktree != "" && c.Service == "" {
			// `binky logs api` in a worktree: a name that is no world but
			// a service of the world you stand in follows that service.
			var here api.StatusResult
			herr := cl.Call(g.ctx, api.OpStatus, api.StatusArgs{WorldRef: cli.WorldRef("", c.Project), Here: true}, api.Handlers{}, &here)
			if herr == nil && len(here.Worlds) == 1 && c.hasService(g.home, here.Worlds[0], c.Worktree) {
				c.Service, c.Worktree = c.Worktree, ""
				return here.Worlds[0], nil, nil
			}
		}
		if err == nil {
			if len(res.Worlds) != 1 {
				return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: the daemon named %d worlds; give the worktree's name or branch (binky status lists them)", len(res.Worlds))}
			}
			return res.Worlds[0], nil, nil
		}
		if !errors.Is(err, api.ErrNoDaemon) { // the daemon answered: its word stands
			return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: %w", err)}
		}
	}
	if g.ctx.Err() != nil {
		return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: %w", err)}
	}
	reg, rerr := openReadOnly(g.ctx, g.home)
	if rerr != nil {
		return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: %w (and without a daemon: %v)", err, rerr)}
	}
	defer reg.Close()
	rec, ferr := world.Find(g.ctx, reg, ref)
	if ferr != nil && c.Worktree != "" && c.Service == "" {
		// As with the daemon: a name that is no world but a service of
		// the world you stand in.
		if here, herr := world.Find(g.ctx, reg, cli.WorldRef("", c.Project)); herr == nil {
			if w, red, rerr := readWorld(g.ctx, reg, here); rerr == nil && c.hasService(g.home, w, c.Worktree) {
				c.Service, c.Worktree = c.Worktree, ""
				fmt.Fprintf(stderr, "binky: logs: no daemon (%v); found %s/%s in the registry\n", err, w.Project, w.Worktree)
				return w, red, nil
			}
		}
	}
	if ferr != nil {
		return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: %w (no daemon: %v)", ferr, err)}
	}
	w, red, rerr := readWorld(g.ctx, reg, rec)
	if rerr != nil {
		return api.World{}, nil, &exitError{Code: 1, Err: fmt.Errorf("logs: %w (and without a daemon: %v)", err, rerr)}
	}
	fmt.Fprintf(stderr, "binky: logs: no daemon (%v); found %s/%s in the registry\n", err, w.Project, w.Worktree)
	return w, red, nil
}

// readLines is the last n lines of a service log (every one when n <= 0)
// written since (when not zero), dated when asked, and redacted as one
// text, so a secret wrapped over lines is found.
func readLines(path string, n int, since time.Time, dated bool, red *redact.Redactor) ([]supervisor.Line, error) {
	var lines []supervisor.Line
	if dated {
		var err error
		if lines, err = supervisor.ReadLogLines(path, n, since); err != nil {
			return nil, err
		}
	} else {
		texts, err := supervisor.ReadLogs(path, n)
		if err != nil {
			return nil, err
		}
		for _, t := range texts {
			lines = append(lines, supervisor.Line{Text: t})
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.Text
	}
	masked := strings.Split(red.String(strings.Join(texts, "\n")), "\n")
	// A mask may join lines (a secret wrapped over two): the masked lines
	// take the times of the raw ones counted from the end, so the newest
	// keep theirs and a line before a join takes its neighbour's.
	out := make([]supervisor.Line, len(masked))
	for i := range masked {
		j := max(len(lines)-len(masked)+i, 0)
		out[i] = supervisor.Line{Text: masked[i], Time: lines[j].Time}
	}
	return out, nil
}

// parseSince reads --since: a duration back from now ("10m", "1h30m") or
// a time (RFC 3339); "" is no bound.
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration back from now is positive (10m)", v)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (10m, 2h) or a time (2026-12-07T12:00:00Z)", v)
}

// hasService reports whether w has a log named svc: one of its services,
// or the setup log.
func (c *logsCmd) hasService(home string, w api.World, svc string) bool {
	for _, s := range w.Services {
		if s.Name == svc {
			return true
		}
	}
	_, err := os.Stat(filepath.Join(logview.Dir(home, w.Project, w.Worktree), svc+".log"))
	return svc == "setup" && err == nil
}

// followRedacted is supervisor.FollowLines with every line passed through
// the redactor as one stream, so a secret wrapped over lines is masked
// too; each printed line keeps the time of the line read (a mask that
// joins two lines shifts the times after it by one line).
func followRedacted(ctx context.Context, path string, n int, since time.Time, red *redact.Redactor, print func(supervisor.Line) error) error {
	sink := &lineSink{print: print}
	w := red.Writer(sink)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(quietFlush)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if w.Held() > 0 && time.Since(sink.lastWrite()) >= quietFlush {
					_ = w.Flush()
				}
			}
		}
	}()
	err := supervisor.FollowLines(ctx, path, n, since, func(l supervisor.Line) error {
		sink.touch(l.Time)
		_, err := w.Write([]byte(l.Text + "\n"))
		return err
	})
	close(stop)
	<-done
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sink.err
	}
	return err
}

// lineSink prints what the redactor writes, a line at a time, each with
// the time of the line read in the same order.
type lineSink struct {
	print  func(supervisor.Line) error
	mu     sync.Mutex
	buf    []byte
	stamps []time.Time // of the lines read and not yet printed
	last   time.Time
	err    error
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		var at time.Time
		if len(s.stamps) > 0 {
			at, s.stamps = s.stamps[0], s.stamps[1:]
		}
		if err := s.print(supervisor.Line{Text: string(s.buf[:i]), Time: at}); err != nil && s.err == nil {
			s.err = err
		}
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

// touch notes a line read, written at.
func (s *lineSink) touch(at time.Time) {
	s.mu.Lock()
	s.last = time.Now()
	s.stamps = append(s.stamps, at)
	s.mu.Unlock()
}

func (s *lineSink) lastWrite() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// logLine is one line of `binky logs --json`.
type logLine struct {
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Service  string `json:"service"`
	// Time is when the line was written (RFC 3339, to the second; see
	// supervisor.Line), "" when the log cannot tell.
	Time string `json:"time,omitempty"`
	Line string `json:"line"`
}

// logRedactor knows every secret the registry records (logview.Redactor):
// services write their logs themselves, so the files hold raw output; it
// is redacted as it is read.
func logRedactor(ctx context.Context, home string) (*redact.Redactor, error) {
	red, _, err := redactorFor(ctx, home, nil)
	return red, err
}

// registryRedactor is logview.Redactor; a seam for tests.
var registryRedactor = logview.Redactor

// redactorFor is logview.Redactor, which opens binky.db through
// registry.Open (migrating an older schema). When that fails for want of a
// write (cannotWrite: a full disk, a home the caller may not write…), the
// same secrets are read from binky.db opened read-only (readOnly, when the
// caller read them already) and degraded says why.
func redactorFor(ctx context.Context, home string, readOnly *redact.Redactor) (red *redact.Redactor, degraded, err error) {
	red, err = registryRedactor(ctx, home)
	if err == nil || !cannotWrite(err) {
		return red, nil, err
	}
	if readOnly == nil {
		var rerr error
		if readOnly, rerr = readOnlyRedactor(ctx, home); rerr != nil {
			return nil, nil, fmt.Errorf("%w (and read-only: %v)", err, rerr)
		}
	}
	return readOnly, err, nil
}
