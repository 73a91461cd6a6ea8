package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
)

// Resources, for clients that read resources rather than call tools: each
// world's env (what the env tool returns, as JSON) and its recent logs
// (the last lines of each service, redacted as logs redacts them).
//
//	binky://worlds/{project}/{worktree}/env
//	binky://worlds/{project}/{worktree}/logs
//
// resources/list names both for every world (listWorldResources);
// resources/templates/list gives the templates.
const (
	resourceScheme  = "binky://worlds/"
	resourceLogTail = 100
)

func worldURI(project, worktree, what string) string {
	return resourceScheme + url.PathEscape(project) + "/" + url.PathEscape(worktree) + "/" + what
}

// parseWorldURI splits a world resource URI into project, worktree and
// env|logs.
func parseWorldURI(uri string) (project, worktree, what string, err error) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 || (parts[2] != "env" && parts[2] != "logs") {
		return "", "", "", fmt.Errorf("unknown resource %s (binky's are %s{project}/{worktree}/env and …/logs)", quoteArg(uri), resourceScheme)
	}
	if project, err = url.PathUnescape(parts[0]); err == nil {
		worktree, err = url.PathUnescape(parts[1])
	}
	if err != nil || project == "" || worktree == "" {
		return "", "", "", fmt.Errorf("resource %s does not name a project and a worktree", quoteArg(uri))
	}
	return project, worktree, parts[2], nil
}

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(mcpgo.NewResourceTemplate(resourceScheme+"{project}/{worktree}/env", "world env",
		mcpgo.WithTemplateDescription("A world's exposed coordinates as JSON: service → URL, the direct http://127.0.0.1:<port> URLs, and the BINKY_* variables verify commands see."),
		mcpgo.WithTemplateMIMEType("application/json"),
	), s.readWorldResource)
	s.mcp.AddResourceTemplate(mcpgo.NewResourceTemplate(resourceScheme+"{project}/{worktree}/logs", "world logs",
		mcpgo.WithTemplateDescription(fmt.Sprintf("The last %d lines of each of a world's service logs, secrets masked.", resourceLogTail)),
		mcpgo.WithTemplateMIMEType("text/plain"),
	), s.readWorldResource)
}

// listWorldResources adds each world's env and logs to resources/list.
func (s *Server) listWorldResources(ctx context.Context, _ any, _ *mcpgo.ListResourcesRequest, res *mcpgo.ListResourcesResult) {
	var st api.StatusResult
	in := api.StatusArgs{WorldRef: s.ref("", "", "")}
	if err := s.call(ctx, api.OpStatus, in, api.Handlers{}, &st); err != nil {
		s.log.Warn("list the worlds for resources/list", "error", err)
		return
	}
	sort.Slice(st.Worlds, func(i, j int) bool {
		return st.Worlds[i].Project+"/"+st.Worlds[i].Worktree < st.Worlds[j].Project+"/"+st.Worlds[j].Worktree
	})
	for _, w := range st.Worlds {
		name := w.Project + "/" + w.Worktree
		res.Resources = append(res.Resources,
			mcpgo.NewResource(worldURI(w.Project, w.Worktree, "env"), name+" env",
				mcpgo.WithResourceDescription("The exposed coordinates of world "+name+" (JSON)."), mcpgo.WithMIMEType("application/json")),
			mcpgo.NewResource(worldURI(w.Project, w.Worktree, "logs"), name+" logs",
				mcpgo.WithResourceDescription("The recent service logs of world "+name+", secrets masked."), mcpgo.WithMIMEType("text/plain")),
		)
	}
}

func (s *Server) readWorldResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	uri := req.Params.URI
	project, worktree, what, err := parseWorldURI(uri)
	if err != nil {
		return nil, err
	}
	if what == "env" {
		var res api.EnvResult
		in := api.EnvArgs{WorldRef: api.WorldRef{Name: worktree, Project: project, Dir: s.cfg.Dir, Env: s.callerEnv()}}
		if err := s.call(ctx, api.OpEnv, in, api.Handlers{}, &res); err != nil {
			return nil, err
		}
		if res.Env == nil {
			res.Env = map[string]string{}
		}
		out := EnvResult{Project: res.Project, Worktree: res.Worktree, State: res.State, Env: res.Env, Direct: res.Direct, Variables: api.EnvVars(res), NotRunning: res.NotRunning, StableName: res.StableName, Waiting: res.Waiting}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return nil, err
		}
		return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
	}
	w, err := s.world(ctx, worktree, "", project)
	if err != nil {
		return nil, err
	}
	red, err := logview.Redactor(ctx, s.cfg.Home)
	if err != nil {
		return nil, err
	}
	dir := logview.Dir(s.cfg.Home, w.Project, w.Worktree)
	var b strings.Builder
	budget := maxLogBytes
	names := make([]string, 0, len(w.Services))
	for _, sv := range w.Services {
		names = append(names, sv.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		lines, truncated, err := logview.Tail(filepath.Join(dir, name+".log"), red, logview.Query{Lines: resourceLogTail, MaxBytes: max(budget, 1)})
		if err != nil {
			fmt.Fprintf(&b, "== %s: %v\n", name, err)
			continue
		}
		more := ""
		if truncated {
			more = " (older lines left out)"
		}
		fmt.Fprintf(&b, "== %s%s\n", name, more)
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
			budget -= len(l) + 1
		}
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: b.String()}}, nil
}
