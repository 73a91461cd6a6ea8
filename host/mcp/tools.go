package mcp

import (
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Tool names: exactly the CLI verbs an agent needs.
const (
	ToolUp     = "up"
	ToolDown   = "down"
	ToolStatus = "status"
	ToolEnv    = "env"
	ToolVerify = "verify"
	ToolLogs   = "logs"
	// ToolBrowserLogs reads what a world's pages reported (browserlogs.go).
	ToolBrowserLogs = "browser_logs"
	ToolReset       = "reset"
	// ToolRestart restarts a world's services (restart.go).
	ToolRestart = "restart"
	// ToolPorts answers "which port and URL is mine" (ports.go).
	ToolPorts = "ports"
)

const projectHelp = "The project the worktree belongs to. Default: the project of the repository the server acts in (repo). " +
	"A worktree name never reaches another project's world unless this names it; outside any repository, a name that exists in several projects is refused with the candidates."

const repoHelp = "A directory inside the repository (or one of its worktrees) to act in. " +
	"Default: the directory the MCP server was started in. Give it when the server was not started inside the repository."

const worktreeHelp = "The world to act on: its worktree name (as status lists it) or its branch (e.g. feat/login). " +
	"Default: the world of the worktree the repository directory is in (the one this server runs in, for an agent working in its own worktree)."

func boolp(b bool) *bool { return &b }

// toolNames are the names of tools(), in the order they are registered.
func toolNames() []string {
	var names []string
	for _, t := range tools() {
		names = append(names, t.Name)
	}
	return names
}

// tools returns the tool definitions, each with a typed, described
// input schema that rejects unknown arguments.
func tools() []mcpgo.Tool {
	return []mcpgo.Tool{
		mcpgo.NewTool(ToolUp,
			mcpgo.WithDescription("Call it first, when you start work in a worktree (no argument: the one you are in) or on a branch, and again after editing binky.toml. "+
				"Bring a branch's world up: create or reuse its git worktree, reserve its port block, "+
				"carve its database/broker slices, start its services and wait until they are healthy. "+
				"A world already up is left as it is. Its services, migrate and seed run with this server's environment (the agent's), "+
				"never the daemon's; ${env.NAME} tokens in binky.toml resolve from it first. "+
				"Sends progress notifications while it works. Returns the world: project, worktree, path, ports and each service's state and URL."),
			mcpgo.WithString("branch", mcpgo.Description("Branch (or worktree name) to bring up; its worktree is created when missing. "+
				"Default: the worktree the repository directory is in.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("profile", mcpgo.Description("Run only the services of this [profiles.<name>] of binky.toml, and what they need. "+
				"The world keeps the choice: a later up without profile, only, except or all runs the same services. At most one of the four.")),
			mcpgo.WithString("only", mcpgo.Description("Run only these services (comma-separated, e.g. \"web,api\"), and what they need; kept like profile.")),
			mcpgo.WithString("except", mcpgo.Description("Run every service but these (comma-separated); kept like profile.")),
			mcpgo.WithBoolean("all", mcpgo.Description("Run every service again, forgetting the world's profile, only or except.")),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Bring a world up", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolDown,
			mcpgo.WithDescription("Call it when you are done with a world for now and want its processes stopped. "+
				"Stop a world's processes. Its worktree, files, port block and slices stay, so up starts it again quickly. "+
				"Returns the world as it is after stopping."),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Stop a world", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolStatus,
			mcpgo.WithDescription("Call it to see what runs and whether a world is healthy (and why not); with no argument it lists every world and names yours in here. "+
				"List the worlds on this machine (or one world) with their state, port block, services "+
				"(state, pid, port, URL), the last verify run (passed or failed, at which commit, stale when HEAD moved since) "+
				"and its cost (memory and CPU of its processes, disk of its untracked and ignored files, its slices' sizes, each with when it was measured). "+
				"Worlds of other hosts this machine reaches (binky --host) come apart, in remote, each with its host and the URLs that answer here."),
			mcpgo.WithString("worktree", mcpgo.Description("Only this world: a worktree name or branch. Default: every world.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Worlds and their last verify", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolEnv,
			mcpgo.WithDescription("Call it after up, before running code, tests or tools that talk to the world's services. "+
				"A world's coordinates for an agent: exactly the services listed in [agents] expose, "+
				"as service → URL (env), as http://127.0.0.1:<port> for each one with a port (direct: use it when *.localhost names do not resolve, as in Go programs on most Linux machines), "+
				"and as the BINKY_<SERVICE>_URL and BINKY_<SERVICE>_DIRECT_URL variables verify commands see (variables). Nothing else is ever included. "+
				"A world that is not up still answers, with state saying so."),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "A world's exposed coordinates", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolVerify,
			mcpgo.WithDescription("Call it before you report work as done, and after a change you want checked. "+
				"Run every [agents] verify command of a world inside its worktree, in order, with the exposed coordinates "+
				"in their environment, and record the run against the worktree's HEAD commit. Every check runs. "+
				"A failed check makes the result an error naming it, with each check's exit code and the tail of its output. "+
				"Sends progress notifications while the checks run."),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Run a world's checks", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(false), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolLogs,
			mcpgo.WithDescription("Call it when a service fails, is unhealthy, or a check or request behaves oddly. "+
				"Read the end of a world's service logs, redacted exactly as `binky logs` redacts them (every secret binky knows is masked). "+
				fmt.Sprintf("Returns at most %d lines per service and %d KB in all, the newest last; truncated says lines were left out. ", maxLogLines, maxLogBytes/1024)+
				"grep keeps only the lines a regular expression (RE2) matches, searched over everything the log files keep."),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("service", mcpgo.Description("One service's log. Default: every service of the world.")),
			mcpgo.WithNumber("lines", mcpgo.Description(fmt.Sprintf("How many of the last lines to return per service (default %d, at most %d).", defaultLogLines, maxLogLines))),
			mcpgo.WithString("grep", mcpgo.Description("Only lines matching this RE2 regular expression (e.g. \"ERROR|panic\").")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "A world's service logs", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolBrowserLogs,
			mcpgo.WithDescription("Call it after loading or clicking through a world's web pages, or when a page looks wrong: you cannot see the browser's console, this tool can. "+
				"Read what the world's pages reported in the browser — console.error calls, uncaught errors, unhandled promise rejections, fetches that failed or answered 400 or more — "+
				"with the page, source line and stack, redacted as logs are. Only for a project whose binky.toml sets [agents] browser_logs = true. "+
				fmt.Sprintf("Returns at most %d entries and %d KB, the newest last; errors_since_up counts what the pages reported since the world's last up.", maxLogLines, maxLogBytes/1024)),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("service", mcpgo.Description("Only the pages of this url service. Default: every service of the world.")),
			mcpgo.WithNumber("lines", mcpgo.Description(fmt.Sprintf("How many of the last entries to return (default %d, at most %d).", defaultLogLines, maxLogLines))),
			mcpgo.WithBoolean("since_up", mcpgo.Description("Only what the pages reported since the world's last up.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "A world's browser errors", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolReset,
			mcpgo.WithDescription("Call it when tests or experiments left the data in a state you do not want. "+
				"Put a world's database/broker slices back to their golden state (migrated and seeded, nothing else): "+
				"every adapter service, or only service. Data the world wrote is lost. Sends progress notifications. Returns the world."),
			mcpgo.WithString("worktree", mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("service", mcpgo.Description("Only this adapter service. Default: all of them.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithString("project", mcpgo.Description(projectHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Reset a world's slices", ReadOnlyHint: boolp(false), DestructiveHint: boolp(true),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		restartTool(),
		stopTool(),
		startTool(),
		portsTool(),
		runTool(),
	}
}
