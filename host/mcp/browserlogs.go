package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/logview"
)

// BrowserLogsResult is the browser_logs tool's structured result.
type BrowserLogsResult struct {
	Project  string             `json:"project"`
	Worktree string             `json:"worktree"`
	Entries  []browserlog.Entry `json:"entries"`
	// Truncated says older entries were left out.
	Truncated bool `json:"truncated,omitempty"`
	// ErrorsSinceUp is how many errors the pages reported since the
	// world's last up.
	ErrorsSinceUp int `json:"errors_since_up"`
}

func (s *Server) browserLogs(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "service", "lines", "since_up", "repo", "project")
	if err != nil {
		return invalid(ToolBrowserLogs, err), nil
	}
	n := a.Lines
	switch {
	case n == 0:
		n = defaultLogLines
	case n < 0 || n > maxLogLines:
		return invalid(ToolBrowserLogs, fmt.Errorf("browser_logs takes lines from 1 to %d; got %d", maxLogLines, n)), nil
	}
	var st api.StatusResult
	in := api.StatusArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project), Here: a.Worktree == ""}
	if err := s.call(ctx, api.OpStatus, in, api.Handlers{}, &st); err != nil {
		return errorResult(ToolBrowserLogs, err), nil
	}
	if len(st.Worlds) != 1 {
		return errorResult(ToolBrowserLogs, &api.Error{Code: api.CodeNotFound, Message: "browser_logs: the daemon did not name one world; give the worktree argument (the status tool lists them)"}), nil
	}
	w := st.Worlds[0]
	dir := logview.Dir(s.cfg.Home, w.Project, w.Worktree)
	entries, truncated, err := browserlog.Read(dir, browserlog.Query{Service: a.Service, SinceUp: a.SinceUp, Last: n})
	if err != nil {
		return errorResult(ToolBrowserLogs, fmt.Errorf("read the browser log: %w", err)), nil
	}
	count, _ := browserlog.CountSinceUp(dir)
	red, err := logview.Redactor(ctx, s.cfg.Home)
	if err != nil {
		return errorResult(ToolBrowserLogs, err), nil
	}
	browserlog.Redact(entries, red)
	// The newest entries whose JSON fits the byte bound.
	budget, i := maxLogBytes, len(entries)
	for i > 0 {
		b, _ := json.Marshal(entries[i-1])
		if len(b)+1 > budget {
			break
		}
		budget -= len(b) + 1
		i--
	}
	truncated = truncated || i > 0
	res := BrowserLogsResult{Project: w.Project, Worktree: w.Worktree, Entries: entries[i:], Truncated: truncated, ErrorsSinceUp: count}
	if res.Entries == nil {
		res.Entries = []browserlog.Entry{}
	}
	summary := fmt.Sprintf("%s/%s browser log: %d entries", w.Project, w.Worktree, len(res.Entries))
	if truncated {
		summary += " (older left out)"
	}
	summary += fmt.Sprintf("; %d errors since up", count)
	if len(res.Entries) == 0 && count == 0 {
		summary += " (pages report here only when binky.toml sets [agents] browser_logs = true)"
	}
	return result(summary, res, false), nil
}
