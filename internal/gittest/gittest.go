// Package gittest makes git repositories for tests: git isolated from the
// machine's configuration, a repository whose binky.toml names a project,
// a worktree of it. Product code never imports it.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Isolate points git, for the rest of t, at an empty configuration and a
// fixed identity. Without git on PATH t is skipped, saying why, except
// under CI=true, where it fails. t may not be parallel (t.Setenv).
func Isolate(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not on PATH")
		}
		t.Skip("git is not on PATH; install git")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": global, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Binky Test", "GIT_AUTHOR_EMAIL": "test@binky.invalid",
		"GIT_COMMITTER_NAME": "Binky Test", "GIT_COMMITTER_EMAIL": "test@binky.invalid",
	} {
		t.Setenv(k, v)
	}
}

// Repo makes a git repository at dir, on branch main, whose one commit
// adds a binky.toml naming project, and returns dir. Call Isolate first.
func Repo(t *testing.T, dir, project string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "binky.toml"), []byte("[project]\nname = \""+project+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Run(t, dir, "init", "-q", "-b", "main")
	Run(t, dir, "add", "binky.toml")
	Run(t, dir, "commit", "-q", "-m", "binky.toml")
	return dir
}

// Worktree adds a worktree of repo at path on a new branch.
func Worktree(t *testing.T, repo, path, branch string) string {
	t.Helper()
	Run(t, repo, "worktree", "add", "-q", "-b", branch, path)
	return path
}

// Run runs git in dir, failing t on error.
func Run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}
