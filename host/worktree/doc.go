// Package worktree owns the git side of a world: finding the repository a
// directory belongs to, listing its worktrees, creating or reusing the
// worktree of a branch (`binky up <branch>`), finding the one you stand in
// (`binky up`), and removing one only when it has no uncommitted changes
// (`binky remove`, unless --force). It drives the git CLI (git 2.36 or
// newer) and links no git library; every call takes a context, and a
// failed git command's error carries git's message trimmed to one line.
//
// Where worktrees go: a new worktree for branch B is created at
// <dir>/<names.Worktree(B)>, where dir is the project's worktree_dir or, by
// default, a directory beside the main worktree named after it with
// ".worktrees" appended. For a repository at ~/src/acme, branch feat/login
// lands in ~/src/acme.worktrees/feat-login-<hash>. A worktree the developer
// made themselves, anywhere, is reused for its branch rather than
// duplicated.
//
// Where a new worktree's branch comes from, in order: the local branch; a
// remote-tracking branch of that name on origin, or on the only remote
// that has one (the new local branch tracks it); else a new branch from
// the HEAD of the worktree the repository was opened from. Nothing is
// fetched.
package worktree
