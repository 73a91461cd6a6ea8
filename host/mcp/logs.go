package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
	"github.com/binkyhq/binky/host/state"
)

// The logs tool's bounds: an agent's context is small. maxLogBytes
// bounds the lines as the reply's JSON carries them (escaped), so a log
// full of control characters does not grow the reply past it.
const (
	defaultLogLines = 50
	maxLogLines     = 500
	maxLogBytes     = 64 << 10
)

// LogsResult is the logs tool's structured result.
type LogsResult struct {
	Project  string       `json:"project"`
	Worktree string       `json:"worktree"`
	Services []ServiceLog `json:"services"`
}

// ServiceLog is the redacted end of one service's log.
type ServiceLog struct {
	Service string        `json:"service"`
	State   state.Service `json:"state"`
	Lines   []string      `json:"lines"`
	// Truncated says older (or, past the byte bound, more) lines were
	// left out.
	Truncated bool `json:"truncated,omitempty"`
}

func (s *Server) logs(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "service", "lines", "grep", "repo", "project")
	if err != nil {
		return invalid(ToolLogs, err), nil
	}
	q := logview.Query{Lines: a.Lines, MaxBytes: maxLogBytes}
	switch {
	case a.Lines == 0:
		q.Lines = defaultLogLines
	case a.Lines < 0 || a.Lines > maxLogLines:
		return invalid(ToolLogs, fmt.Errorf("logs takes lines from 1 to %d; got %d", maxLogLines, a.Lines)), nil
	}
	if a.Grep != "" {
		re, err := regexp.Compile(a.Grep)
		if err != nil {
			return invalid(ToolLogs, grepError(a.Grep, err)), nil
		}
		q.Grep = re
	}
	var st api.StatusResult
	in := api.StatusArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project), Here: a.Worktree == ""}
	if err := s.call(ctx, api.OpStatus, in, api.Handlers{}, &st); err != nil {
		return errorResult(ToolLogs, err), nil
	}
	if len(st.Worlds) != 1 {
		return errorResult(ToolLogs, &api.Error{Code: api.CodeNotFound, Message: "logs: the daemon did not name one world; give the worktree argument (the status tool lists them)"}), nil
	}
	w := st.Worlds[0]
	var svcs []api.Service
	for _, sv := range w.Services {
		if a.Service == "" || sv.Name == a.Service {
			svcs = append(svcs, sv)
		}
	}
	if len(svcs) == 0 {
		var have []string
		for _, sv := range w.Services {
			have = append(have, sv.Name)
		}
		return invalid(ToolLogs, fmt.Errorf("%s/%s has no service %s (it has: %s)", w.Project, w.Worktree, quoteArg(a.Service), strings.Join(have, ", "))), nil
	}
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].Name < svcs[j].Name })
	red, err := logview.Redactor(ctx, s.cfg.Home)
	if err != nil {
		return errorResult(ToolLogs, err), nil
	}
	res := LogsResult{Project: w.Project, Worktree: w.Worktree, Services: []ServiceLog{}}
	dir := logview.Dir(s.cfg.Home, w.Project, w.Worktree)
	budget := maxLogBytes
	for _, sv := range svcs {
		q.MaxBytes = max(budget, 1)
		lines, truncated, err := logview.Tail(filepath.Join(dir, sv.Name+".log"), red, q)
		if err != nil {
			return errorResult(ToolLogs, fmt.Errorf("read the log of %s: %w", sv.Name, err)), nil
		}
		// Tail counts raw bytes; the reply carries the lines as JSON.
		var cut bool
		lines, cut, budget = fitEncoded(lines, budget)
		truncated = truncated || cut
		if lines == nil {
			lines = []string{}
		}
		res.Services = append(res.Services, ServiceLog{Service: sv.Name, State: sv.State, Lines: lines, Truncated: truncated})
	}
	return result(logsSummary(res, a.Grep), res, false), nil
}

func logsSummary(r LogsResult, grep string) string {
	var parts []string
	for _, sv := range r.Services {
		p := fmt.Sprintf("%s %d lines", sv.Service, len(sv.Lines))
		if sv.Truncated {
			p += " (truncated)"
		}
		parts = append(parts, p)
	}
	what := "logs"
	if grep != "" {
		what = "log lines matching " + quoteArg(grep)
	}
	return fmt.Sprintf("%s/%s %s: %s", r.Project, r.Worktree, what, strings.Join(parts, ", "))
}

// fitEncoded keeps the newest lines whose JSON encoding fits budget, and
// returns them, whether older ones were left out, and the budget left.
func fitEncoded(lines []string, budget int) ([]string, bool, int) {
	i := len(lines)
	for i > 0 {
		b, _ := json.Marshal(lines[i-1])
		if len(b)+1 > budget {
			break
		}
		budget -= len(b) + 1
		i--
	}
	return lines[i:], i > 0, budget
}

// grepError says why grep is not a regular expression, quoting no more of
// it than any argument is quoted (the regexp package's own message holds
// the whole expression for some errors).
func grepError(grep string, err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Errorf("logs grep %s is not an RE2 regular expression: %s: %s", quoteArg(grep), se.Code, quoteArg(se.Expr))
	}
	return fmt.Errorf("logs grep %s is not an RE2 regular expression", quoteArg(grep))
}

func (s *Server) reset(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "service", "repo", "project")
	if err != nil {
		return invalid(ToolReset, err), nil
	}
	p := s.progress(req)
	var w api.World
	in := api.ResetArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project), Service: a.Service}
	if err := s.call(ctx, api.OpReset, in, api.Handlers{Progress: p.step}, &w); err != nil {
		return errorResult(ToolReset, err), nil
	}
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	return result(fmt.Sprintf("%s/%s reset: %s", w.Project, w.Worktree, api.ResetSummary(w, a.Service)), w, false), nil
}
