package doctor

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
)

// registerWorld records one world of project p at path (in repository
// repo, brought up with config) in home's registry.
func registerWorld(t *testing.T, home, project, repo, path, config string) {
	t.Helper()
	reg, err := registry.Open(context.Background(), filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.UpsertWorktree(context.Background(), &registry.Worktree{
		Project: project, Name: "main", Branch: "main", Path: path, Repo: repo, ConfigPath: config, State: state.WorldDown,
	}); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=binky", "GIT_AUTHOR_EMAIL=binky@example.invalid",
		"GIT_COMMITTER_NAME=binky", "GIT_COMMITTER_EMAIL=binky@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestUnregisteredWorktreeInWorktreeDir: a git worktree with no world, in
// the project's own worktree_dir (not the default <repo>.worktrees), is
// reported.
func TestUnregisteredWorktreeInWorktreeDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(repo, "binky.toml")
	toml := "[project]\nname = \"p\"\nworktree_dir = \"../elsewhere\"\n\n[services.web]\ncmd = \"true\"\n"
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "init")
	stray := filepath.Join(base, "elsewhere", "feature-x")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "feature-x", stray)
	registerWorld(t, home, "p", repo, repo, cfg)

	fs := checkWorktrees(context.Background(), &Env{Home: home})
	found := false
	for _, f := range fs {
		if f.Status == StatusWarn && strings.Contains(f.Message, stray) {
			found = true
			if f.Fix == "" {
				t.Errorf("finding %q has no fix", f.Message)
			}
		}
	}
	if !found {
		t.Errorf("findings %v; want a warning naming %s", fs, stray)
	}
}

// TestListenerInProjectPortRange: a program listening inside a project's
// port_range (outside binky's default range) is reported, naming the
// project and the file that sets the range.
func TestListenerInProjectPortRange(t *testing.T) {
	if _, known := listening(); !known {
		t.Skip("listening ports are not listed on this OS")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if port+10 > 65535 {
		t.Skipf("ephemeral port %d leaves no room for a range", port)
	}
	base := t.TempDir()
	repo, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(repo, "binky.toml")
	toml := fmt.Sprintf("[project]\nname = \"ranged\"\nport_range = [%d, %d]\n\n[services.web]\ncmd = \"true\"\n", port, port+10)
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	registerWorld(t, home, "ranged", repo, repo, cfg)

	fs := checkPorts(context.Background(), &Env{Home: home})
	want := "port " + strconv.Itoa(port) + " in project ranged's port_range"
	for _, f := range fs {
		if f.Status == StatusWarn && strings.Contains(f.Message, want) {
			if !strings.Contains(f.Fix, cfg) {
				t.Errorf("fix %q; want it to name %s", f.Fix, cfg)
			}
			return
		}
	}
	t.Errorf("findings %v; want a warning containing %q", fs, want)
}
