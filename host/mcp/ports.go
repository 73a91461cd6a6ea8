package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
)

// StatusResult is the status tool's result: the daemon's status, and
// which world is the caller's when the call named none.
type StatusResult struct {
	api.StatusResult
	// Here is project/worktree of the world of the worktree the server's
	// directory (or repo) is in; "" when it has none.
	Here string `json:"here,omitempty"`
}

// PortsResult answers "which port and URL is mine".
type PortsResult struct {
	Project  string        `json:"project"`
	Worktree string        `json:"worktree"`
	Branch   string        `json:"branch,omitempty"`
	Path     string        `json:"path"`
	State    state.World   `json:"state"`
	Block    [2]int        `json:"block"`
	Services []ServicePort `json:"services"`
}

// ServicePort is one service's coordinates.
type ServicePort struct {
	Name  string         `json:"name"`
	State state.Service  `json:"state"`
	Port  int            `json:"port,omitempty"`
	Ports map[string]int `json:"ports,omitempty"`
	// URL is the proxied name (<svc>.<worktree>.<project>.localhost).
	URL string `json:"url,omitempty"`
	// Direct is http://127.0.0.1:<port>, for clients where *.localhost
	// does not resolve.
	Direct string `json:"direct,omitempty"`
	// Address is an adapter service's slice address, redacted.
	Address string `json:"address,omitempty"`
}

func portsTool() mcpgo.Tool {
	return mcpgo.NewTool(ToolPorts,
		mcpgo.WithDescription("Call it when you need to know which port or URL is yours: with no argument it answers for the worktree this server runs in (or repo). "+
			"Returns the world's port block and, for every service, its state, port(s), proxied URL, direct http://127.0.0.1:<port> URL and, for a database or broker slice, its address (secrets masked). "+
			"Every service is listed, not only the [agents] expose set env returns."),
		mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
		mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
		mcpgo.WithString("project", mcpgo.Description(projectHelp)),
		mcpgo.WithSchemaAdditionalProperties(false),
		mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
			Title: "My ports and URLs", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
			IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
		}),
	)
}

// world is the one world a call means: the named one, else the caller's.
func (s *Server) world(ctx context.Context, worktree, repo, project string) (api.World, error) {
	var st api.StatusResult
	in := api.StatusArgs{WorldRef: s.ref(worktree, repo, project), Here: worktree == ""}
	if err := s.call(ctx, api.OpStatus, in, api.Handlers{}, &st); err != nil {
		return api.World{}, err
	}
	if len(st.Worlds) != 1 {
		return api.World{}, &api.Error{Code: api.CodeNotFound, Message: "the daemon did not name one world; give the worktree argument (the status tool lists them)"}
	}
	return st.Worlds[0], nil
}

// here is the caller's world.
func (s *Server) here(ctx context.Context, repo, project string) (api.World, error) {
	return s.world(ctx, "", repo, project)
}

// hereName names the world a call without a worktree argument acted on:
// the caller's, as the daemon resolves it from repo. Should the daemon not
// name one now, it is the directory's world.
func (s *Server) hereName(ctx context.Context, repo, project string) string {
	if w, err := s.here(ctx, repo, project); err == nil && w.Worktree != "" {
		return w.Worktree
	}
	return "the world of " + s.dir(repo)
}

func (s *Server) ports(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "repo", "project")
	if err != nil {
		return invalid(ToolPorts, err), nil
	}
	w, err := s.world(ctx, a.Worktree, a.Repo, a.Project)
	if err != nil {
		return errorResult(ToolPorts, err), nil
	}
	res := portsOf(w)
	return result(portsSummary(res), res, false), nil
}

func portsOf(w api.World) PortsResult {
	res := PortsResult{Project: w.Project, Worktree: w.Worktree, Branch: w.Branch, Path: w.Path, State: w.State, Block: w.Ports, Services: []ServicePort{}}
	for _, sv := range w.Services {
		sp := ServicePort{Name: sv.Name, State: sv.State, Port: sv.Port, Ports: sv.Ports, URL: sv.URL, Address: sv.Address}
		if sv.Port > 0 {
			sp.Direct = fmt.Sprintf("http://127.0.0.1:%d", sv.Port)
		}
		res.Services = append(res.Services, sp)
	}
	sort.Slice(res.Services, func(i, j int) bool { return res.Services[i].Name < res.Services[j].Name })
	return res
}

func portsSummary(r PortsResult) string {
	var parts []string
	for _, sv := range r.Services {
		switch {
		case sv.URL != "" && sv.Port > 0:
			parts = append(parts, fmt.Sprintf("%s %s (port %d)", sv.Name, sv.URL, sv.Port))
		case sv.Port > 0:
			parts = append(parts, fmt.Sprintf("%s port %d", sv.Name, sv.Port))
		case sv.Address != "":
			parts = append(parts, fmt.Sprintf("%s %s", sv.Name, sv.Address))
		}
	}
	s := fmt.Sprintf("%s/%s (%s)", r.Project, r.Worktree, r.State)
	if r.Block[0] > 0 {
		s += fmt.Sprintf(", ports %d-%d", r.Block[0], r.Block[1])
	}
	if len(parts) == 0 {
		return s + ": no service has a port"
	}
	return s + ": " + strings.Join(parts, "; ")
}
