package worktree_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain isolates git from the developer's configuration: an empty global
// config, no system config, a fixed identity.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "binky-worktree-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	global := filepath.Join(tmp, "gitconfig")
	if err := os.WriteFile(global, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": global, "GIT_CONFIG_NOSYSTEM": "1", "HOME": tmp,
		"GIT_AUTHOR_NAME": "Binky Test", "GIT_AUTHOR_EMAIL": "test@binky.invalid",
		"GIT_COMMITTER_NAME": "Binky Test", "GIT_COMMITTER_EMAIL": "test@binky.invalid",
	} {
		os.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS"} {
		os.Unsetenv(k)
	}
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "git is not on PATH")
			return 1
		}
		fmt.Fprintln(os.Stderr, "skipping host/worktree tests: git is not on PATH; install git")
		return 0
	}
	if err := buildTemplate(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "build the template repository:", err)
		return 1
	}
	return m.Run()
}

// gitT runs git in dir and returns its trimmed stdout, failing the test on
// error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// commit writes file with content in dir and commits it.
func commit(t *testing.T, dir, file, content string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", file)
	gitT(t, dir, "commit", "-q", "-m", "change "+file)
	return gitT(t, dir, "rev-parse", "HEAD")
}

// fixture is a copy of the template repository built once by TestMain: a
// repository at <tmp>/app with one commit on main and three bare remotes,
//
//	origin: remote-only, dual
//	up1:    dual, only-up1, shared
//	up2:    shared
//
// fetched, with no local branch but main. The remotes are shared by every
// copy; tests only read them.
type fixture struct {
	tmp, root string
	commits   map[string]string // "main" or remote/branch → commit
}

// template is the repository newFixture copies, and its commits.
var template struct {
	root    string
	commits map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	tmp := t.TempDir()
	// Resolve symlinks so paths compare with git's (macOS /var → /private/var).
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	f := &fixture{tmp: tmp, root: filepath.Join(tmp, "app"), commits: template.commits}
	if err := os.CopyFS(f.root, os.DirFS(template.root)); err != nil {
		t.Fatalf("copy the template repository: %v", err)
	}
	return f
}

// buildTemplate makes the template repository under tmp.
func buildTemplate(tmp string) error {
	var err error
	sh := func(dir string, args ...string) string {
		if err != nil {
			return ""
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, e := cmd.CombinedOutput()
		if e != nil {
			err = fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), e, out)
		}
		return strings.TrimSpace(string(out))
	}
	root := filepath.Join(tmp, "app")
	commits := map[string]string{}
	commitFile := func(file, content string) string {
		if err == nil {
			err = os.WriteFile(filepath.Join(root, file), []byte(content), 0o644)
		}
		sh(root, "add", file)
		sh(root, "commit", "-q", "-m", "change "+file)
		return sh(root, "rev-parse", "HEAD")
	}
	sh(tmp, "init", "-q", "-b", "main", "app")
	commits["main"] = commitFile("a.txt", "a\n")
	push := map[string][]string{
		"origin": {"remote-only", "dual"},
		"up1":    {"dual", "only-up1", "shared"},
		"up2":    {"shared"},
	}
	for _, rm := range []string{"origin", "up1", "up2"} {
		bare := filepath.Join(tmp, rm+".git")
		sh(tmp, "init", "-q", "--bare", bare)
		sh(root, "remote", "add", rm, bare)
		for _, b := range push[rm] {
			sh(root, "checkout", "-q", "-b", b, "main")
			commits[rm+"/"+b] = commitFile(rm+"-"+b+".txt", b+"\n")
			sh(root, "push", "-q", rm, b)
			sh(root, "checkout", "-q", "main")
			sh(root, "branch", "-q", "-D", b)
		}
		sh(root, "fetch", "-q", rm)
	}
	template.root, template.commits = root, commits
	return err
}

func ctxT(t *testing.T) context.Context {
	return t.Context()
}
