// Package hooks owns what binky needs to plug into the worktree tools
// agents use (docs/agents.md): Claude Code's WorktreeCreate and
// WorktreeRemove payloads (claude.go: read from stdin, bounded, checked),
// the repository a hook runs for and the paths it may act on
// (confine.go), the worktree such a hook adds or removes (add.go), and
// the hook entries `binky hook install` merges into .claude/settings.json
// (settings.go) and worktrunk's .config/wt.toml (worktrunk.go), never
// removing or rewriting what the files already hold, written safely
// (install.go). The verbs themselves live in cmd/binky/hook.go.
//
// A hook acts only inside its project. The project is the repository the
// hook's working directory (CLAUDE_PROJECT_DIR for Claude Code) is in,
// never one a payload names (OpenProject). A path a payload or argument
// names is accepted only when it resolves (symlinks followed, ".."
// cleaned) to a worktree of that repository: git's common directory
// there is the project's, git lists the worktree, and no component is
// .git (Project.Worktree; RemovableWorktree also wants a linked
// worktree's top). A new worktree goes only to
// <top>/.claude/worktrees/<name>, resolved inside the worktree the hook
// runs in and in its repository (Project.NewWorktree). Anything else is a
// *RefusedError (ErrOutsideProject) returned before any git command that
// writes and before any daemon call; the checks run only `git rev-parse`
// and `git worktree list`, with the GIT_DIR family of variables removed.
//
// `binky hook install` reads a config from a repository someone else may
// have written (Install): its directory must resolve inside the project,
// the file must be absent or a regular file of at most MaxConfig bytes
// and never a symlink (refused unopened, wherever it points), a FIFO or
// device is refused without blocking (host/safefile), and the new content
// goes to a random O_EXCL temporary file in the same directory, with the
// old file's mode, renamed over the file.
package hooks
