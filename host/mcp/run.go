package mcp

import (
	"context"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
)

// ToolRun runs one command in a world's environment through the jobs
// queue, as `binky run` does.
const ToolRun = "run"

// maxCommandArg bounds the command argument of run.
const maxCommandArg = 4 << 10

// RunResult is the run tool's structured result: how the command ended
// and the tail of its output (stdout and stderr interleaved, redacted by
// the daemon), at most tailBytes.
type RunResult struct {
	Project    string `json:"project"`
	Worktree   string `json:"worktree"`
	Command    string `json:"command"` // as given, elided past echoBytes
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	WaitedMS   int64  `json:"waited_ms"` // in the jobs queue
	OutputTail string `json:"output_tail"`
	Truncated  bool   `json:"truncated"` // output was left out before the tail
}

func runTool() mcpgo.Tool {
	return mcpgo.NewTool(ToolRun,
		mcpgo.WithDescription("Run one shell command (a test suite, a build) inside a world's worktree with the environment verify gives its checks "+
			"(the exposed coordinates as BINKY_<SERVICE>_URL, BINKY_ENV_JSON, and this server's environment). "+
			"It waits first in the machine's jobs queue (at most [admission] jobs commands at once, one per core by default, and none while free RAM is under the reserve), "+
			"so many agents' test suites share the machine instead of swapping it; progress notifications give its place and why it waits. "+
			fmt.Sprintf("Returns the exit code and the last %d KB of its output, with secrets masked; a non-zero exit makes the result an error.", tailBytes/1024)),
		mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
		mcpgo.WithString("command", mcpgo.Required(), mcpgo.Description(fmt.Sprintf("The command, run by sh -c in the worktree (e.g. \"go test ./...\"); at most %d bytes.", maxCommandArg))),
		mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
		mcpgo.WithString("project", mcpgo.Description(projectHelp)),
		mcpgo.WithSchemaAdditionalProperties(false),
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
			Title: "Run a command in a world", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
			IdempotentHint: boolp(false), OpenWorldHint: boolp(false),
		}),
	)
}

func (s *Server) run(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "command", "repo", "project")
	if err != nil {
		return invalid(ToolRun, err), nil
	}
	if a.Command == "" {
		return invalid(ToolRun, fmt.Errorf("run needs the command argument, e.g. \"go test ./...\"")), nil
	}
	p := s.progress(req)
	var out tails
	h := api.Handlers{
		Progress: p.step,
		Output: func(o api.Output) {
			out.add(0, o.Data)
			p.output(0, o.Data)
		},
	}
	var r api.RunResult
	in := api.RunArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project), Command: a.Command}
	if err := s.call(ctx, api.OpRun, in, h, &r); err != nil {
		return errorResult(ToolRun, err), nil
	}
	tail, truncated := out.get(0, tailBytes)
	res := RunResult{
		Project: r.Project, Worktree: r.Worktree, Command: elide(a.Command), ExitCode: r.ExitCode,
		DurationMS: r.DurationMS, WaitedMS: r.WaitedMS, OutputTail: tail, Truncated: truncated,
	}
	summary := fmt.Sprintf("%s/%s: %s exited %d after %.1fs (waited %.1fs in the jobs queue)",
		r.Project, r.Worktree, quoteArg(a.Command), r.ExitCode, float64(r.DurationMS)/1000, float64(r.WaitedMS)/1000)
	return result(summary, res, r.ExitCode != 0), nil
}
