package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentsConfig is a world with one process and a check, for the worktrees
// agent tools make (docs/agents.md).
const agentsConfig = `
[project]
name = "agents"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 600"
ports = ["http"]

[agents]
expose = ["web"]
verify = ["test -f binky.toml"]
`

// worktreeCount is how many worktrees git lists for e's repository.
func (e *env) worktreeCount() int {
	return strings.Count(e.git("worktree", "list", "--porcelain"), "\nworktree ") + 1
}

// TestWorktreeMadeByClaudeCode: a worktree Claude Code made (a plain git
// worktree add under .claude/worktrees/x) gets its world in place; every
// verb finds it from the cwd; remove keeps the worktree unless --worktree.
func TestWorktreeMadeByClaudeCode(t *testing.T) {
	e := newEnv(t, agentsConfig)
	os.WriteFile(filepath.Join(e.repo, ".gitignore"), []byte(".claude/worktrees/\n"), 0o644)
	e.git("add", ".gitignore")
	e.git("commit", "-q", "-m", "ignore agent worktrees")
	x := filepath.Join(e.repo, ".claude", "worktrees", "x")
	e.git("worktree", "add", "-q", "-b", "worktree-x", x)

	in := func(args ...string) result {
		t.Helper()
		r := e.binkyIn(x, args...)
		if r.code != 0 {
			t.Fatalf("binky %s in %s: exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon log:\n%s", strings.Join(args, " "), x, r.code, r.stdout, r.stderr, e.daemonLog())
		}
		return r
	}
	in("up", "-q")
	w := e.status().world(t, "worktree-x")
	if w.Path != x || w.Branch != "worktree-x" || w.State != "up" {
		t.Fatalf("world of .claude/worktrees/x: path %s, branch %s, state %s; want %s, worktree-x, up", w.Path, w.Branch, w.State, x)
	}
	// The branch named from elsewhere is the same world, never a second worktree.
	if r := e.must("up", "worktree-x"); !strings.Contains(r.stdout, "already up") {
		t.Errorf("up worktree-x from the main worktree: %q; want it already up", r.stdout)
	}
	if n := e.worktreeCount(); n != 2 {
		t.Errorf("git lists %d worktrees after up worktree-x; want 2 (no second worktree of the branch)\n%s", n, e.git("worktree", "list"))
	}
	if r := in("env"); !strings.Contains(r.stdout, "web") {
		t.Errorf("env in the worktree: %q; want the web service", r.stdout)
	}
	in("verify")
	in("down")
	if got := e.status().world(t, "worktree-x").State; got != "down" {
		t.Errorf("after down in the worktree: state %s; want down", got)
	}
	r := in("remove")
	if !strings.Contains(r.stdout, "stays") {
		t.Errorf("remove of a worktree binky did not make: %q; want it to say the worktree stays", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(x, "binky.toml")); err != nil {
		t.Fatalf("remove took away a worktree binky did not make: %v", err)
	}
	if st := e.status(); len(st.Worlds) != 0 {
		t.Fatalf("after remove: worlds %+v; want none", st.Worlds)
	}
	in("up", "-q")
	in("remove", "--worktree")
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Fatalf("remove --worktree left %s (stat: %v)", x, err)
	}
	if n := e.worktreeCount(); n != 1 {
		t.Errorf("git lists %d worktrees after remove --worktree; want 1", n)
	}
}

// TestWorktreesMadeElsewhere: a worktrunk-style sibling directory and a
// detached HEAD; a detached HEAD's world is named after its directory,
// the same on every up; a worktree binky made still goes with its world.
func TestWorktreesMadeElsewhere(t *testing.T) {
	e := newEnv(t, agentsConfig)
	sib := e.repo + ".feat-y"
	e.git("worktree", "add", "-q", "-b", "feat/y", sib)
	det := filepath.Join(filepath.Dir(e.repo), "scratch")
	e.git("worktree", "add", "-q", "--detach", det, "HEAD")
	t.Cleanup(func() { os.RemoveAll(sib); os.RemoveAll(det) })

	for _, dir := range []string{sib, det, det} {
		if r := e.binkyIn(dir, "up", "-q"); r.code != 0 {
			t.Fatalf("up in %s: exit %d\n%s%s\ndaemon log:\n%s", dir, r.code, r.stdout, r.stderr, e.daemonLog())
		}
	}
	st := e.status()
	if len(st.Worlds) != 2 {
		t.Fatalf("worlds %+v; want 2 (the sibling's and the detached HEAD's, once)", st.Worlds)
	}
	if w := st.world(t, "scratch"); w.Path != det || w.Branch != "" {
		t.Errorf("detached world: path %s branch %q; want %s and no branch", w.Path, w.Branch, det)
	}
	for _, w := range st.Worlds {
		if w.Worktree != "scratch" && w.Path != sib {
			t.Errorf("world %s at %s; want the sibling %s", w.Worktree, w.Path, sib)
		}
	}
	// A second detached worktree in a directory of the same name gets a
	// name of its own; the first keeps "scratch".
	det2 := filepath.Join(filepath.Dir(e.repo), "other", "scratch")
	e.git("worktree", "add", "-q", "--detach", det2, "HEAD")
	t.Cleanup(func() { os.RemoveAll(det2) })
	if r := e.binkyIn(det2, "up", "-q"); r.code != 0 {
		t.Fatalf("up in %s: exit %d\n%s", det2, r.code, r.stderr)
	}
	for _, w := range e.status().Worlds {
		if w.Path == det2 && (w.Worktree == "scratch" || !strings.HasPrefix(w.Worktree, "scratch-")) {
			t.Errorf("second detached worktree named %q; want scratch-<hash>", w.Worktree)
		}
		if w.Path == det && w.Worktree != "scratch" {
			t.Errorf("first detached worktree renamed to %q", w.Worktree)
		}
	}
	if r := e.binkyIn(det2, "remove"); r.code != 0 {
		t.Fatalf("remove in %s: exit %d\n%s", det2, r.code, r.stderr)
	}
	if r := e.binkyIn(det, "remove"); r.code != 0 {
		t.Fatalf("remove in the detached worktree: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(det); err != nil {
		t.Errorf("remove took away the detached worktree binky did not make: %v", err)
	}

	// A worktree binky made goes with its world, as before.
	e.must("up", "-q", "feat/z")
	made := ""
	for _, w := range e.status().Worlds {
		if w.Branch == "feat/z" {
			made = w.Path
		}
	}
	if made == "" {
		t.Fatalf("no world of feat/z in status")
	}
	e.must("remove", "feat/z")
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("remove of binky's own worktree left %s (stat: %v)", made, err)
	}
}

// hookRun runs command with sh -c in dir, as a tool runs a hook: payload
// on stdin, the tool's variables in the environment.
func (e *env) hookRun(dir, command, payload string, vars ...string) result {
	e.t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(append(e.environ(), e.extra...), vars...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("sh -c %q: %v", command, err)
	}
	return r
}

// TestClaudeCodeHooks installs binky's hooks into .claude/settings.json
// and runs them as Claude Code does: the command from the file, the
// recorded payload shape on stdin, CLAUDE_PROJECT_DIR set, the path alone
// on stdout.
func TestClaudeCodeHooks(t *testing.T) {
	e := newEnv(t, agentsConfig)
	os.MkdirAll(filepath.Join(e.repo, ".claude"), 0o755)
	os.WriteFile(filepath.Join(e.repo, ".claude", "settings.json"), []byte(`{"permissions":{"allow":["Bash(make:*)"]}}`), 0o644)
	e.must("hook", "install", "claude")
	var settings struct {
		Permissions map[string][]string `json:"permissions"`
		Hooks       map[string][]struct {
			Hooks []struct{ Type, Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	b := read(filepath.Join(e.repo, ".claude", "settings.json"))
	if err := json.Unmarshal([]byte(b), &settings); err != nil {
		t.Fatalf("settings.json after install: %v\n%s", err, b)
	}
	if len(settings.Permissions["allow"]) != 1 {
		t.Errorf("install lost the permissions: %s", b)
	}
	if r := e.must("hook", "install", "claude"); !strings.Contains(r.stdout, "nothing changed") {
		t.Errorf("second install: %q; want nothing changed", r.stdout)
	}
	create := settings.Hooks["WorktreeCreate"][0].Hooks[0].Command
	remove := settings.Hooks["WorktreeRemove"][0].Hooks[0].Command

	payload := fmt.Sprintf(`{"session_id":"3f1c2a9e-5d7b-4c1e-9a3f-7b2d8e6c4a10","transcript_path":"/tmp/t.jsonl","cwd":%q,"hook_event_name":"WorktreeCreate","name":"bright-running-fox"}`, e.repo)
	r := e.hookRun(e.repo, create, payload, "CLAUDE_PROJECT_DIR="+e.repo)
	want := filepath.Join(e.repo, ".claude", "worktrees", "bright-running-fox")
	if r.code != 0 || r.stdout != want+"\n" {
		t.Fatalf("WorktreeCreate hook: exit %d, stdout %q; want 0 and exactly %q\nstderr:\n%s\ndaemon log:\n%s", r.code, r.stdout, want+"\n", r.stderr, e.daemonLog())
	}
	w := e.status().world(t, "worktree-bright-running-fox")
	if w.Path != want || w.State != "up" {
		t.Errorf("world after the hook: %s at %s; want up at %s", w.State, w.Path, want)
	}
	if r := e.hookRun(e.repo, create, `{"hook_event_name":"WorktreeCreate"}`, "CLAUDE_PROJECT_DIR="+e.repo); r.code == 0 || r.stdout != "" {
		t.Errorf("a payload without a name: exit %d, stdout %q; want non-zero and nothing on stdout", r.code, r.stdout)
	}

	rm := fmt.Sprintf(`{"session_id":"3f1c2a9e","transcript_path":"/tmp/t.jsonl","cwd":%q,"hook_event_name":"WorktreeRemove","worktree_path":%q}`, e.repo, want)
	if r := e.hookRun(e.repo, remove, rm, "CLAUDE_PROJECT_DIR="+e.repo); r.code != 0 || r.stdout != "" {
		t.Fatalf("WorktreeRemove hook: exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Errorf("WorktreeRemove left %s (stat: %v)", want, err)
	}
	if st := e.status(); len(st.Worlds) != 0 {
		t.Errorf("worlds after WorktreeRemove: %+v; want none", st.Worlds)
	}
}

// TestWorktrunkAndGenericHooks installs the worktrunk hooks and runs them
// as worktrunk does (sh -c in the worktree), and binky hook up|down as a
// Conductor setup script would.
func TestWorktrunkAndGenericHooks(t *testing.T) {
	e := newEnv(t, agentsConfig)
	e.must("hook", "install", "worktrunk")
	var cfg map[string]map[string]string
	if _, err := toml.DecodeFile(filepath.Join(e.repo, ".config", "wt.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	up, down := cfg["pre-start"]["binky"], cfg["pre-remove"]["binky"]
	if up == "" || down == "" {
		t.Fatalf(".config/wt.toml after install: %v", cfg)
	}
	sib := e.repo + ".feat-wt"
	e.git("worktree", "add", "-q", "-b", "feat-wt", sib)
	t.Cleanup(func() { os.RemoveAll(sib) })
	if r := e.hookRun(sib, up, ""); r.code != 0 {
		t.Fatalf("pre-start hook: exit %d\n%s%s\ndaemon log:\n%s", r.code, r.stdout, r.stderr, e.daemonLog())
	}
	if w := e.status().world(t, "feat-wt"); w.Path != sib || w.State != "up" {
		t.Errorf("world after pre-start: %s at %s", w.State, w.Path)
	}
	if r := e.hookRun(sib, down, ""); r.code != 0 {
		t.Fatalf("pre-remove hook: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(sib, "binky.toml")); err != nil {
		t.Errorf("pre-remove took the worktree away from worktrunk: %v", err)
	}
	if st := e.status(); len(st.Worlds) != 0 {
		t.Errorf("worlds after pre-remove: %+v", st.Worlds)
	}
	// Again with nothing to remove: a pre-remove hook must not block.
	if r := e.hookRun(sib, down, ""); r.code != 0 {
		t.Errorf("pre-remove of a worktree without a world: exit %d\n%s", r.code, r.stderr)
	}
	// Conductor: a setup script run in the workspace, a path argument.
	if r := e.hookRun(e.repo, "binky hook up \"$WS\"", "", "WS="+sib); r.code != 0 {
		t.Fatalf("binky hook up PATH: exit %d\n%s", r.code, r.stderr)
	}
	e.status().world(t, "feat-wt")
}

// startMCPIn is startMCP with the server started in dir, as an agent
// working in its own worktree starts it.
func (e *env) startMCPIn(dir string) *mcpClient {
	e.t.Helper()
	return e.startMCPAt(dir)
}

// TestMCPFromAgentWorktree: an agent in .claude/worktrees/x drives its
// world end to end through the official go-sdk client, never naming it:
// up (progress notifications counted) → env → ports → status → verify →
// resources → down.
func TestMCPFromAgentWorktree(t *testing.T) {
	e := newEnv(t, agentsConfig)
	x := filepath.Join(e.repo, ".claude", "worktrees", "x")
	e.git("worktree", "add", "-q", "-b", "worktree-x", x)
	c := e.startMCPIn(x)

	up := decodeAs[mcpWorld](t, mustOK(t, c, "up", nil, "up-here"))
	if up.Worktree != "worktree-x" || up.Path != x || up.State != "up" {
		t.Fatalf("up with no argument: %+v; want worktree-x at %s, up", up, x)
	}
	if p := c.progressFor("up-here", 3); len(p) < 3 {
		t.Errorf("up sent %d progress notifications %q; want at least 3 (worktree, ports, the service)", len(p), p)
	} else {
		t.Logf("up: %d progress notifications", len(p))
	}

	env := mustOK(t, c, "env", nil, "")
	var er struct {
		Worktree string            `json:"worktree"`
		Direct   map[string]string `json:"direct"`
	}
	json.Unmarshal(env.structured, &er)
	if er.Worktree != "worktree-x" || !strings.HasPrefix(er.Direct["web"], "http://127.0.0.1:") {
		t.Errorf("env with no argument: %s; want worktree-x with web's direct URL", env.json)
	}

	ports := mustOK(t, c, "ports", nil, "")
	var pr struct {
		Worktree string `json:"worktree"`
		Block    [2]int `json:"block"`
		Services []struct {
			Name   string `json:"name"`
			Port   int    `json:"port"`
			Direct string `json:"direct"`
		} `json:"services"`
	}
	json.Unmarshal(ports.structured, &pr)
	if pr.Worktree != "worktree-x" || len(pr.Services) != 1 || pr.Services[0].Port < pr.Block[0] || pr.Services[0].Port > pr.Block[1] || pr.Block[0] == 0 {
		t.Errorf("ports with no argument: %s; want web's port inside worktree-x's block", ports.json)
	}
	if !strings.Contains(ports.summary, fmt.Sprintf("port %d", pr.Services[0].Port)) {
		t.Errorf("ports summary %q does not say the port", ports.summary)
	}

	st := mustOK(t, c, "status", nil, "")
	var sr struct {
		Here string `json:"here"`
	}
	json.Unmarshal(st.structured, &sr)
	if here := e.project + "/worktree-x"; sr.Here != here || !strings.HasPrefix(st.summary, "yours: "+here) {
		t.Errorf("status with no argument: here %q, summary %q; want %s named", sr.Here, st.summary, here)
	}

	if v := decodeAs[mcpVerify](t, mustOK(t, c, "verify", nil, "verify-here")); !v.Passed {
		t.Errorf("verify with no argument: %+v; want passed", v)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lr, err := c.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	envURI, logsURI := "binky://worlds/"+e.project+"/worktree-x/env", "binky://worlds/"+e.project+"/worktree-x/logs"
	if strings.Join(uris, " ") != envURI+" "+logsURI {
		t.Errorf("resources/list: %v; want %s and %s", uris, envURI, logsURI)
	}
	rr, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: envURI})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"web"`) {
		t.Errorf("read %s: %+v, %v; want the env JSON naming web", envURI, rr, err)
	}
	rr, err = c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: logsURI})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "== web") {
		t.Errorf("read %s: %+v, %v; want web's log section", logsURI, rr, err)
	}
	lt, err := c.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 2 {
		t.Errorf("resources/templates/list: %+v, %v; want the env and logs templates", lt, err)
	}

	if d := decodeAs[mcpWorld](t, mustOK(t, c, "down", nil, "")); d.State != "down" || d.Worktree != "worktree-x" {
		t.Errorf("down with no argument: %+v; want worktree-x down", d)
	}
}

// docBlocks returns the fenced blocks of docs/agents.md that follow a
// "<!-- tested: NAME -->" line, by name.
func docBlocks(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "<!-- tested: ")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, " -->")
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("docs/agents.md: %q is not followed by a fenced block", name)
		}
		var body []string
		for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		out[name] = strings.Join(body, "\n") + "\n"
	}
	for _, want := range []string{"claude-settings", "worktrunk", "conductor", "mcp-json"} {
		if out[want] == "" {
			t.Fatalf("docs/agents.md has no tested block %q", want)
		}
	}
	return out
}

// TestAgentsDoc runs docs/agents.md's setups as written: the files the
// installers write are the ones the page shows, Conductor's scripts bring
// a workspace's world up and down, and the MCP config starts a server the
// go-sdk client talks to.
func TestAgentsDoc(t *testing.T) {
	doc := docBlocks(t)
	e := newEnv(t, agentsConfig)
	e.must("hook", "install", "claude")
	e.must("hook", "install", "worktrunk")
	var got, want any
	json.Unmarshal([]byte(read(filepath.Join(e.repo, ".claude", "settings.json"))), &got)
	if err := json.Unmarshal([]byte(doc["claude-settings"]), &want); err != nil {
		t.Fatalf("docs/agents.md claude-settings: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("binky hook install claude wrote\n%v\nthe page shows\n%v", got, want)
	}
	if w := read(filepath.Join(e.repo, ".config", "wt.toml")); w != doc["worktrunk"] {
		t.Errorf("binky hook install worktrunk wrote\n%s\nthe page shows\n%s", w, doc["worktrunk"])
	}

	// Conductor: the scripts run in the workspace, with its variables.
	var conductor struct {
		Scripts map[string]string `toml:"scripts"`
	}
	if _, err := toml.Decode(doc["conductor"], &conductor); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(filepath.Dir(e.repo), "workspaces", "tokyo")
	e.git("worktree", "add", "-q", "-b", "tokyo", ws)
	vars := []string{"CONDUCTOR_WORKSPACE_NAME=tokyo", "CONDUCTOR_WORKSPACE_PATH=" + ws, "CONDUCTOR_ROOT_PATH=" + e.repo}
	if r := e.hookRun(ws, conductor.Scripts["setup"], "", vars...); r.code != 0 {
		t.Fatalf("conductor setup %q: exit %d\n%s", conductor.Scripts["setup"], r.code, r.stderr)
	}
	if w := e.status().world(t, "tokyo"); w.Path != ws || w.State != "up" {
		t.Errorf("after the setup script: %s at %s", w.State, w.Path)
	}

	// The MCP config, started in the workspace.
	var mcpCfg struct {
		McpServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(doc["mcp-json"]), &mcpCfg); err != nil {
		t.Fatal(err)
	}
	srv := mcpCfg.McpServers["binky"]
	if srv.Command != "binky" || strings.Join(srv.Args, " ") != "mcp" {
		t.Fatalf("mcp-json: %+v; want binky mcp", srv)
	}
	c := e.startMCPIn(ws)
	ports := mustOK(t, c, "ports", nil, "")
	if !strings.HasPrefix(ports.summary, e.project+"/tokyo (up)") {
		t.Errorf("ports from the workspace: %q; want tokyo's world", ports.summary)
	}
	c.cs.Close()

	if r := e.hookRun(ws, conductor.Scripts["archive"], "", vars...); r.code != 0 {
		t.Fatalf("conductor archive %q: exit %d\n%s", conductor.Scripts["archive"], r.code, r.stderr)
	}
	if st := e.status(); len(st.Worlds) != 0 {
		t.Errorf("after the archive script: worlds %+v", st.Worlds)
	}
}
