package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ctl"
)

// Config is what the server needs from its caller.
type Config struct {
	// Home is the BINKY_HOME whose daemon the tools talk to.
	Home string
	// Exe is the binky binary that starts the daemon when none runs.
	Exe string
	// Dir is the default repository directory: the server's working
	// directory.
	Dir string
	// Environ reads the server's environment (default os.Environ), which
	// every tool forwards to the daemon as the caller's.
	Environ func() []string
	// Version is reported to clients in the initialize handshake.
	Version string
	// Log receives diagnostics; it must not write to the protocol stream.
	Log hclog.Logger
}

// caller is the one method the tools need from the daemon client.
type caller interface {
	Call(ctx context.Context, op string, args any, h api.Handlers, out any) error
}

// Server serves the tools over one stdio session.
type Server struct {
	cfg     Config
	log     hclog.Logger
	connect func(ctx context.Context) (caller, error)
	mcp     *server.MCPServer
	out     *lineWriter // the protocol stream while Serve runs (writer.go)
}

// notify queues one JSON-RPC notification, or drops it when the client
// has fallen queueLen messages behind (lineWriter): a tool's progress
// never waits for the client.
func (s *Server) notify(method string, params any) error {
	if s.out == nil {
		return errNotServing
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("encode %s notification: %w", method, err)
	}
	if !s.out.tryWrite(append(b, '\n')) {
		return errors.New("dropped: the client is not reading")
	}
	return nil
}

const instructions = "Binky gives every git worktree of a repository its own running world: ports, supervised processes, " +
	"URLs and isolated database slices. The loop: up a branch, hand the agent what env returns, let it work, " +
	"call verify before accepting the result; status shows every world and its last verify."

// New builds a server; Serve runs it.
func New(cfg Config) *Server {
	if cfg.Environ == nil {
		cfg.Environ = os.Environ
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	s := &Server{cfg: cfg, log: cfg.Log.Named("mcp")}
	s.connect = func(ctx context.Context) (caller, error) {
		return ctl.Ensure(ctx, cfg.Home, cfg.Exe)
	}
	hooks := &server.Hooks{}
	hooks.AddOnRequestInitialization(refuseLongToolName)
	hooks.AddAfterListResources(s.listWorldResources)
	s.mcp = server.NewMCPServer("binky", cfg.Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithHooks(hooks),
		server.WithInstructions(instructions),
		server.WithRecovery(),
	)
	handlers := map[string]server.ToolHandlerFunc{
		ToolUp: s.up, ToolDown: s.down, ToolStatus: s.status, ToolEnv: s.env, ToolVerify: s.verify,
		ToolLogs: s.logs, ToolReset: s.reset, ToolRestart: s.restart, ToolPorts: s.ports, ToolRun: s.run,
		ToolStop: s.stop, ToolStart: s.start, ToolBrowserLogs: s.browserLogs,
	}
	for _, t := range tools() {
		s.mcp.AddTool(t, s.logged(t.Name, handlers[t.Name]))
	}
	s.addResources()
	return s
}

// Serve speaks MCP on in/out until in reaches EOF or ctx ends; both are a
// clean stop and return nil. Calls still running then are cancelled. One
// Serve at a time per process: mcp-go keeps a single stdio session.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = newLineWriter(out, ctx.Done(), s.log)
	defer s.out.close()
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(s.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}))
	err := std.Listen(ctx, &lineEnded{r: in}, s.out)
	// Answers still queued go out before Serve returns: a client that
	// closed stdin may still read them. A signal (ctx) does not wait.
	s.out.flush(ctx)
	if err == nil || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("serve MCP on stdio: %w", err)
}

// logged wraps a handler with a log line per call; a handler never returns
// a protocol error (failures are tool results with isError). It is where a
// result is made to repeat no argument longer than echoBytes whole (a
// daemon message quoting a name, a summary quoting grep…).
func (s *Server) logged(name string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		start := time.Now()
		res, err := h(ctx, req)
		if err != nil {
			res, err = errorResult(name, err), nil
		}
		res = scrubResult(res, s.scrubber(req))
		s.log.Info("tool call", "tool", name, "error", res.IsError, "took", time.Since(start).Round(time.Millisecond))
		return res, err
	}
}

// args are every tool's arguments; each tool's schema lists the ones it takes.
type args struct {
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"`
	Repo     string `json:"repo"`
	Project  string `json:"project"`
	Service  string `json:"service"`
	Grep     string `json:"grep"`
	Lines    int    `json:"lines"`
	Command  string `json:"command"`
	// up's selection of services.
	Profile, Only, Except string
	All                   bool
	// browser_logs: only what the pages reported since the last up.
	SinceUp bool
}

// bind decodes a call's arguments, refusing unknown ones, those the tool
// does not take, and any longer than its bound (argLimit, maxArgsBytes):
// no argument that size is meaningful, and the refusal names sizes, never
// more than echoBytes of a value.
func bind(req mcpgo.CallToolRequest, allowed ...string) (args, error) {
	var a args
	tool := req.Params.Name
	raw, err := rawArguments(req)
	if err != nil {
		return a, err
	}
	var m map[string]json.RawMessage
	if len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &m); err != nil {
			return a, fmt.Errorf("read %s arguments (%d bytes): they must be a JSON object: %w", tool, len(raw), err)
		}
	}
	ok := map[string]bool{}
	for _, n := range allowed {
		ok[n] = true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same call is refused the same way
	for _, k := range keys {
		if !ok[k] {
			return a, fmt.Errorf("%s takes no argument %s (it takes: %s)", tool, quoteArg(k), strings.Join(allowed, ", "))
		}
	}
	for _, k := range keys {
		v := m[k]
		if k == "all" || k == "since_up" {
			dst := &a.All
			if k == "since_up" {
				dst = &a.SinceUp
			}
			if err := json.Unmarshal(v, dst); err != nil {
				if str := ""; json.Unmarshal(v, &str) == nil && len(str) > argLimit(k) {
					return a, tooBig(tool, k, len(str), argLimit(k))
				}
				return a, fmt.Errorf("%s argument %q must be true or false (got %d bytes of JSON)", tool, k, len(v))
			}
			continue
		}
		if k == "lines" {
			if err := json.Unmarshal(v, &a.Lines); err != nil {
				return a, fmt.Errorf("%s argument %q must be a whole number (got %d bytes of JSON)", tool, k, len(v))
			}
			continue
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return a, fmt.Errorf("%s argument %q must be a string (got %d bytes of JSON)", tool, k, len(v))
		}
		if limit := argLimit(k); len(str) > limit {
			return a, tooBig(tool, k, len(str), limit)
		}
		switch k {
		case "branch":
			a.Branch = str
		case "worktree":
			a.Worktree = str
		case "repo":
			a.Repo = str
		case "service":
			a.Service = str
		case "grep":
			a.Grep = str
		case "project":
			a.Project = str
		case "command":
			a.Command = str
		case "profile":
			a.Profile = str
		case "only":
			a.Only = str
		case "except":
			a.Except = str
		}
	}
	if len(raw) > maxArgsBytes {
		return a, fmt.Errorf("%s arguments are %d bytes of JSON; they take at most %d", tool, len(raw), maxArgsBytes)
	}
	return a, nil
}

func rawArguments(req mcpgo.CallToolRequest) (json.RawMessage, error) {
	switch v := req.GetRawArguments().(type) {
	case json.RawMessage:
		return v, nil
	case nil:
		return nil, nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("read %s arguments: %w", req.Params.Name, err)
		}
		return b, nil
	}
}

// invalid is a tool error for arguments the daemon never saw.
func invalid(tool string, err error) *mcpgo.CallToolResult {
	return errorResult(tool, &api.Error{Code: api.CodeInvalid, Message: err.Error()})
}

// dir is the repository directory a call acts in: repo (relative to the
// server's directory) or the server's directory.
func (s *Server) dir(repo string) string {
	if repo == "" {
		return s.cfg.Dir
	}
	if !filepath.IsAbs(repo) {
		repo = filepath.Join(s.cfg.Dir, repo)
	}
	return filepath.Clean(repo)
}

func (s *Server) call(ctx context.Context, op string, in any, h api.Handlers, out any) error {
	c, err := s.connect(ctx)
	if err != nil {
		return fmt.Errorf("reach the binky daemon (BINKY_HOME %s): %w", s.cfg.Home, err)
	}
	return c.Call(ctx, op, in, h, out)
}

func (s *Server) up(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "branch", "repo", "profile", "only", "except", "all")
	if err != nil {
		return invalid(ToolUp, err), nil
	}
	dir := s.dir(a.Repo)
	in := api.UpArgs{Dir: dir, Branch: a.Branch, Env: s.callerEnv(), Profile: a.Profile, All: a.All}
	if a.Only != "" {
		in.Only = []string{a.Only} // the engine splits it on commas
	}
	if a.Except != "" {
		in.Except = []string{a.Except}
	}
	p := s.progress(req)
	start := time.Now()
	var w api.World
	if err := s.call(ctx, api.OpUp, in, api.Handlers{Progress: p.step}, &w); err != nil {
		return errorResult(ToolUp, err), nil
	}
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	return result(upSummary(w, time.Since(start)), w, false), nil
}

func (s *Server) down(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "repo", "project")
	if err != nil {
		return invalid(ToolDown, err), nil
	}
	p := s.progress(req)
	var w api.World
	in := api.DownArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project)}
	if err := s.call(ctx, api.OpDown, in, api.Handlers{Progress: p.step}, &w); err != nil {
		return errorResult(ToolDown, err), nil
	}
	if w.Services == nil {
		w.Services = []api.Service{}
	}
	return result(downSummary(w), w, false), nil
}

func (s *Server) status(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "repo", "project")
	if err != nil {
		return invalid(ToolStatus, err), nil
	}
	var res api.StatusResult
	in := api.StatusArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project)}
	if err := s.call(ctx, api.OpStatus, in, api.Handlers{}, &res); err != nil {
		return errorResult(ToolStatus, err), nil
	}
	if res.Worlds == nil {
		res.Worlds = []api.World{}
	}
	out := StatusResult{StatusResult: res}
	summary := statusSummary(res, time.Now())
	if a.Worktree == "" {
		if w, err := s.here(ctx, a.Repo, a.Project); err == nil {
			out.Here = w.Project + "/" + w.Worktree
			summary = "yours: " + out.Here + "; " + summary
		}
	}
	return result(summary, out, false), nil
}

func (s *Server) env(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "repo", "project")
	if err != nil {
		return invalid(ToolEnv, err), nil
	}
	var res api.EnvResult
	in := api.EnvArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project)}
	if err := s.call(ctx, api.OpEnv, in, api.Handlers{}, &res); err != nil {
		return errorResult(ToolEnv, err), nil
	}
	if res.Env == nil {
		res.Env = map[string]string{}
	}
	out := EnvResult{Project: res.Project, Worktree: res.Worktree, State: res.State, Env: res.Env, Direct: res.Direct, Variables: api.EnvVars(res), NotRunning: res.NotRunning, StableName: res.StableName, Waiting: res.Waiting}
	return result(envSummary(out, res.Order), out, false), nil
}

func (s *Server) verify(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	a, err := bind(req, "worktree", "repo", "project")
	if err != nil {
		return invalid(ToolVerify, err), nil
	}
	p := s.progress(req)
	var out tails
	h := api.Handlers{
		Progress: p.step,
		Output: func(o api.Output) {
			out.add(o.Check, o.Data)
			p.output(o.Check, o.Data)
		},
	}
	var v api.Verify
	in := api.VerifyArgs{WorldRef: s.ref(a.Worktree, a.Repo, a.Project)}
	err = s.call(ctx, api.OpVerify, in, h, &v)
	failure := ""
	if err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Code != api.CodeFailed || len(ae.Detail) == 0 {
			return errorResult(ToolVerify, err), nil
		}
		if derr := json.Unmarshal(ae.Detail, &v); derr != nil {
			return errorResult(ToolVerify, fmt.Errorf("%w (and its detail did not decode: %v)", err, derr)), nil
		}
		failure = ae.Message
	}
	name := a.Worktree
	if name == "" {
		name = s.hereName(ctx, a.Repo, a.Project)
	}
	res := VerifyResult{
		Worktree: name, Passed: v.Passed && err == nil, Commit: v.Commit, Dirty: v.Dirty,
		At: v.At, Duration: v.Duration, Checks: []CheckResult{}, Error: failure,
		BrowserErrors: v.BrowserErrors,
	}
	limit := tailLimit(len(v.Checks))
	for i, c := range v.Checks {
		tail, truncated := out.get(i, limit)
		res.Checks = append(res.Checks, CheckResult{
			Cmd: c.Cmd, ExitCode: c.ExitCode, Duration: c.Duration, Passed: c.Passed,
			OutputTail: tail, Truncated: truncated,
		})
	}
	return result(verifySummary(res), res, !res.Passed), nil
}
