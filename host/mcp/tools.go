package mcp

import (
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Tool names: exactly the CLI verbs an agent needs.
const (
	ToolUp     = "up"
	ToolDown   = "down"
	ToolStatus = "status"
	ToolEnv    = "env"
	ToolVerify = "verify"
)

const repoHelp = "A directory inside the repository (or one of its worktrees) to act in. " +
	"Default: the directory the MCP server was started in. Give it when the server was not started inside the repository."

const worktreeHelp = "The world to act on: its worktree name (as status lists it) or its branch (e.g. feat/login)."

func boolp(b bool) *bool { return &b }

// tools returns the five tool definitions, each with a typed, described
// input schema that rejects unknown arguments.
func tools() []mcpgo.Tool {
	return []mcpgo.Tool{
		mcpgo.NewTool(ToolUp,
			mcpgo.WithDescription("Bring a branch's world up: create or reuse its git worktree, reserve its port block, "+
				"carve its database/broker slices, start its services and wait until they are healthy. "+
				"A world already up is left as it is. Its services, migrate and seed run with this server's environment (the agent's), "+
				"never the daemon's; ${env.NAME} tokens in binky.toml resolve from it first. "+
				"Sends progress notifications while it works. Returns the world: project, worktree, path, ports and each service's state and URL."),
			mcpgo.WithString("branch", mcpgo.Description("Branch (or worktree name) to bring up; its worktree is created when missing. "+
				"Default: the worktree the repository directory is in.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Bring a world up", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolDown,
			mcpgo.WithDescription("Stop a world's processes. Its worktree, files, port block and slices stay, so up starts it again quickly. "+
				"Returns the world as it is after stopping."),
			mcpgo.WithString("worktree", mcpgo.Required(), mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Stop a world", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolStatus,
			mcpgo.WithDescription("List the worlds on this machine (or one world) with their state, port block, services "+
				"(state, pid, port, URL) and the last verify run (passed or failed, at which commit, stale when HEAD moved since)."),
			mcpgo.WithString("worktree", mcpgo.Description("Only this world: a worktree name or branch. Default: every world.")),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Worlds and their last verify", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolEnv,
			mcpgo.WithDescription("A world's coordinates for an agent: exactly the services listed in [agents] expose, "+
				"as service → URL (env) and as the BINKY_<SERVICE>_URL variables verify commands see (variables). Nothing else is ever included."),
			mcpgo.WithString("worktree", mcpgo.Required(), mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "A world's exposed coordinates", ReadOnlyHint: boolp(true), DestructiveHint: boolp(false),
				IdempotentHint: boolp(true), OpenWorldHint: boolp(false),
			}),
		),
		mcpgo.NewTool(ToolVerify,
			mcpgo.WithDescription("Run every [agents] verify command of a world inside its worktree, in order, with the exposed coordinates "+
				"in their environment, and record the run against the worktree's HEAD commit. Every check runs. "+
				"A failed check makes the result an error naming it, with each check's exit code and the tail of its output. "+
				"Sends progress notifications while the checks run."),
			mcpgo.WithString("worktree", mcpgo.Required(), mcpgo.Description(worktreeHelp)),
			mcpgo.WithString("repo", mcpgo.Description(repoHelp)),
			mcpgo.WithSchemaAdditionalProperties(false),
			mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
				Title: "Run a world's checks", ReadOnlyHint: boolp(false), DestructiveHint: boolp(false),
				IdempotentHint: boolp(false), OpenWorldHint: boolp(false),
			}),
		),
	}
}
