// Package hooks owns what binky needs to plug into the worktree tools
// agents use (docs/agents.md): Claude Code's WorktreeCreate and
// WorktreeRemove payloads (claude.go: read from stdin, bounded, checked),
// the worktree such a hook adds where Claude Code asks (add.go), and the
// hook entries `binky hook install` merges into .claude/settings.json
// (settings.go) and worktrunk's .config/wt.toml (worktrunk.go), never
// removing or rewriting what the files already hold. The verbs themselves
// live in cmd/binky/hook.go.
package hooks
