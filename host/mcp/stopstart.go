package mcp

import (
	"context"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
)

const (
	// ToolStop stops one service and keeps it stopped (stopstart.go).
	ToolStop = "stop"
	// ToolStart starts a service binky stop stopped (stopstart.go).
	ToolStart = "start"
)

// stopTool stops one service of a world, as `binky stop` does.
func stopTool() mcpgo.Tool {
	return mcpgo.NewTool(ToolStop,
		mcpgo.WithDescription("Stop one cmd service of a world and keep it stopped: up leaves it stopped (status says \"stopped by binky stop\") until the start tool starts it. "+
			"The rest of the world keeps running. Returns the world."),
		mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
		mcpgo.WithString("service", mcpgo.Required(), mcpgo.Description("The cmd service to stop.")),
		mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
		mcpgo.WithString("project", mcpgo.Description(projectHelp)),
		mcpgo.WithSchemaAdditionalProperties(false),
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
			Title: "Stop one service", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
			IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
		}),
	)
}

// startTool starts one service of a world, as `binky start` does.
func startTool() mcpgo.Tool {
	return mcpgo.NewTool(ToolStart,
		mcpgo.WithDescription("Start one cmd service of a world that is up (one the stop tool stopped, or any that does not run), waited healthy as up waits. "+
			"Sends progress notifications. Returns the world."),
		mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
		mcpgo.WithString("service", mcpgo.Required(), mcpgo.Description("The cmd service to start.")),
		mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
		mcpgo.WithString("project", mcpgo.Description(projectHelp)),
		mcpgo.WithSchemaAdditionalProperties(false),
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
			Title: "Start one service", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
			IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
		}),
	)
}

func (s *Server) stop(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	return s.oneService(ctx, req, ToolStop, api.OpStopService, "stopped (up leaves it so until start)")
}

func (s *Server) start(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	return s.oneService(ctx, req, ToolStart, api.OpStartService, "running")
}

// oneService calls op on the service the request names.
func (s *Server) oneService(ctx context.Context, req mcpgo.CallToolRequest, tool, op, done string) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "service", "repo", "project")
	if err != nil {
		return invalid(tool, err), nil
	}
	if a.Service == "" {
		return invalid(tool, fmt.Errorf("service is required: the cmd service to %s", tool)), nil
	}
	p := s.progress(req)
	var w api.World
	in := api.ServicesArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project), Services: []string{a.Service}}
	if err := s.call(ctx, op, in, api.Handlers{Progress: p.step}, &w); err != nil {
		return errorResult(tool, err), nil
	}
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	return result(fmt.Sprintf("%s/%s: %s %s", w.Project, w.Worktree, quoteArg(a.Service), done), w, false), nil
}
