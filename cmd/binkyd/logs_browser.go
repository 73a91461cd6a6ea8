package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/redact"
)

// browserLine is one entry of `binky logs --browser --json`.
type browserLine struct {
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	browserlog.Entry
}

// browser prints the world's browser log (docs/agents.md, "Browser
// logs"): the last n entries (all when n is 0) since since, of c.Service
// when given, redacted as the service logs are.
func (c *logsCmd) browser(ctx context.Context, stdout, stderr io.Writer, w api.World, dir string, n int, since time.Time, red *redact.Redactor) error {
	q := browserlog.Query{Service: c.Service, Since: since, Last: n}
	print := func(e browserlog.Entry) error {
		es := []browserlog.Entry{e}
		browserlog.Redact(es, red)
		if c.JSON {
			return json.NewEncoder(stdout).Encode(browserLine{Project: w.Project, Worktree: w.Worktree, Entry: es[0]})
		}
		_, err := fmt.Fprintln(stdout, browserlog.Format(es[0], c.Service == ""))
		return err
	}
	if c.Follow {
		if err := browserlog.Follow(ctx, dir, q, followPoll, print); err != nil && ctx.Err() == nil {
			return &exitError{Code: 1, Err: fmt.Errorf("logs: follow the browser log of %s/%s: %w", w.Project, w.Worktree, err)}
		}
		return nil
	}
	entries, _, err := browserlog.Read(dir, q)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("logs: read the browser log of %s/%s: %w", w.Project, w.Worktree, err)}
	}
	if len(entries) == 0 && !c.JSON {
		fmt.Fprintf(stderr, "binky: logs: nothing in the browser log of %s/%s (the pages of a project with [agents] browser_logs = true report there)\n", w.Project, w.Worktree)
		return nil
	}
	for _, e := range entries {
		if err := print(e); err != nil {
			return err
		}
	}
	return nil
}

// followPoll is how often `logs --browser -f` looks for new entries.
const followPoll = 500 * time.Millisecond
