package mcp

import (
	"context"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
)

// restartTool restarts a world's services, as `binky restart` does.
func restartTool() mcpgo.Tool {
	return mcpgo.NewTool(ToolRestart,
		mcpgo.WithDescription("Restart a world's services in dependency order, each waited healthy as up waits: one service, or every cmd service of the world. "+
			"Call it after changing code a service does not reload by itself, or when a service is stuck. Sends progress notifications. Returns the world."),
		mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
		mcpgo.WithString("service", mcpgo.Description("Only this service. Default: every cmd service of the world.")),
		mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
		mcpgo.WithString("project", mcpgo.Description(projectHelp)),
		mcpgo.WithSchemaAdditionalProperties(false),
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
			Title: "Restart a world's services", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
			IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
		}),
	)
}

func (s *Server) restart(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "service", "repo", "project")
	if err != nil {
		return invalid(ToolRestart, err), nil
	}
	p := s.progress(req)
	var w api.World
	in := api.RestartArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project)}
	if a.Service != "" {
		in.Services = []string{a.Service}
	}
	if err := s.call(ctx, api.OpRestart, in, api.Handlers{Progress: p.step}, &w); err != nil {
		return errorResult(ToolRestart, err), nil
	}
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	which := "every service"
	if a.Service != "" {
		which = quoteArg(a.Service)
	}
	return result(fmt.Sprintf("%s/%s: %s restarted", w.Project, w.Worktree, which), w, false), nil
}
