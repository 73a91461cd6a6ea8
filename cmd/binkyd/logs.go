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
	prefix := len(services) > 1
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	print := func(svc, line string) error {
		mu.Lock()
		defer mu.Unlock()
		if c.JSON {
			return enc.Encode(logLine{Project: w.Project, Worktree: w.Worktree, Service: svc, Line: line})
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
			lines, err := supervisor.ReadLogs(filepath.Join(dir, svc+".log"), c.Lines)
			if err != nil {
				return err
			}
			if len(lines) == 0 {
				continue
			}
			// Redacted as one text, so a secret wrapped over lines is
			// found; a mask may then join two lines.
			text := red.String(strings.Join(lines, "\n"))
			for _, l := range strings.Split(text, "\n") {
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
			errs[i] = followRedacted(ctx, filepath.Join(dir, svc+".log"), c.Lines, red, func(l string) error { return print(svc, l) })
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

// followRedacted is supervisor.Follow with every line passed through the
// redactor as one stream, so a secret wrapped over lines is masked too.
func followRedacted(ctx context.Context, path string, n int, red *redact.Redactor, print func(string) error) error {
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
	err := supervisor.Follow(ctx, path, n, func(l string) error {
		sink.touch()
		_, err := w.Write([]byte(l + "\n"))
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

// lineSink prints what the redactor writes, a line at a time.
type lineSink struct {
	print func(string) error
	mu    sync.Mutex
	buf   []byte
	last  time.Time
	err   error
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
		if err := s.print(string(s.buf[:i])); err != nil && s.err == nil {
			s.err = err
		}
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

func (s *lineSink) touch() {
	s.mu.Lock()
	s.last = time.Now()
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
	Line     string `json:"line"`
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
