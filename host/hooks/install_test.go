package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/safefile"
)

// installCase is one of the configs `binky hook install` writes.
type installCase struct {
	rel   string
	merge func([]byte) ([]byte, bool, error)
	ours  string // in the file after the merge
}

func installCases() []installCase {
	return []installCase{
		{".claude/settings.json", func(in []byte) ([]byte, bool, error) {
			return MergeClaudeSettings(in, ClaudeCreateCmd, ClaudeRemoveCmd)
		}, ClaudeCreateCmd},
		{".config/wt.toml", func(in []byte) ([]byte, bool, error) {
			return MergeWorktrunk(in, UpCmd, DownCmd)
		}, UpCmd},
	}
}

// installProject is a project top and a directory outside it.
func installProject(t *testing.T) (top, outside string) {
	t.Helper()
	base := t.TempDir()
	top, outside = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	os.MkdirAll(top, 0o755)
	os.MkdirAll(outside, 0o755)
	return top, outside
}

func TestInstallWritesAndKeepsMode(t *testing.T) {
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, _ := installProject(t)
			path, changed, err := Install(top, c.rel, c.merge)
			if err != nil || !changed || path != filepath.Join(top, filepath.FromSlash(c.rel)) {
				t.Fatalf("Install into nothing = %s, %v, %v", path, changed, err)
			}
			if b, _ := os.ReadFile(path); !strings.Contains(string(b), c.ours) {
				t.Fatalf("%s after install:\n%s", path, b)
			}
			if _, changed, err := Install(top, c.rel, c.merge); err != nil || changed {
				t.Errorf("second Install: changed %v, %v; want nothing changed", changed, err)
			}
			if runtime.GOOS == "windows" {
				return
			}
			os.WriteFile(path, nil, 0o600)
			os.Chmod(path, 0o600)
			if _, changed, err := Install(top, c.rel, c.merge); err != nil || !changed {
				t.Fatalf("Install over an empty file: %v, %v", changed, err)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("mode after install: %v (%v); want 0600 kept", st.Mode(), err)
			}
			ents, _ := os.ReadDir(filepath.Dir(path))
			if len(ents) != 1 {
				t.Errorf("the config's directory holds %d entries after install; want only the config (no temporary file left)", len(ents))
			}
		})
	}
}

// TestInstallThroughCommittedTmpSymlink: a repository that commits
// <config>.binky-tmp as a symlink to a file outside it (the name the old
// installer wrote through) gets its config written and the outside file
// is unchanged.
func TestInstallThroughCommittedTmpSymlink(t *testing.T) {
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, outside := installProject(t)
			victim := filepath.Join(outside, "victim")
			os.WriteFile(victim, []byte("precious\n"), 0o644)
			path := filepath.Join(top, filepath.FromSlash(c.rel))
			os.MkdirAll(filepath.Dir(path), 0o755)
			symlink(t, victim, path+".binky-tmp")
			if _, _, err := Install(top, c.rel, c.merge); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Fatalf("the file outside the project now holds %q", b)
			}
			if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
				t.Errorf("%s after install: %v, %v; want a regular file", path, st, err)
			}
		})
	}
}

// TestInstallRefusesSymlinkedConfig: a config that is a symlink is
// refused, wherever it points, and neither the link nor its target
// changes.
func TestInstallRefusesSymlinkedConfig(t *testing.T) {
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, outside := installProject(t)
			path := filepath.Join(top, filepath.FromSlash(c.rel))
			os.MkdirAll(filepath.Dir(path), 0o755)
			inside := filepath.Join(top, "real")
			for _, target := range []string{filepath.Join(outside, "victim"), inside} {
				os.WriteFile(target, nil, 0o644)
				os.Remove(path)
				symlink(t, target, path)
				_, _, err := Install(top, c.rel, c.merge)
				if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), path+" is a symlink") {
					t.Errorf("Install through a symlink to %s: %v; want %s is a symlink", target, err, path)
				}
				if b, _ := os.ReadFile(target); len(b) != 0 {
					t.Errorf("the symlink's target %s now holds %q", target, b)
				}
				if to, err := os.Readlink(path); err != nil || to != target {
					t.Errorf("the symlink now points to %q (%v)", to, err)
				}
			}
		})
	}
}

// TestInstallRefusesDirOutside: the config's directory may be a symlink
// inside the project, never one out of it.
func TestInstallRefusesDirOutside(t *testing.T) {
	for _, c := range installCases() {
		t.Run(c.rel, func(t *testing.T) {
			top, outside := installProject(t)
			dir := filepath.Join(top, filepath.Dir(filepath.FromSlash(c.rel)))
			symlink(t, outside, dir)
			_, _, err := Install(top, c.rel, c.merge)
			if !errors.Is(err, ErrOutsideProject) || !strings.Contains(err.Error(), "outside the project") {
				t.Errorf("Install through a directory symlink out of the project: %v; want ErrOutsideProject", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("Install wrote %d entries outside the project", len(ents))
			}
			os.Remove(dir)
			os.MkdirAll(filepath.Join(top, "conf"), 0o755)
			symlink(t, "conf", dir)
			if _, changed, err := Install(top, c.rel, c.merge); err != nil || !changed {
				t.Errorf("Install through a directory symlink inside the project: %v, %v; want written", changed, err)
			}
			if _, err := os.Stat(filepath.Join(top, "conf", filepath.Base(c.rel))); err != nil {
				t.Errorf("the config is not in the linked directory: %v", err)
			}
		})
	}
}

func TestInstallRefusesLargeConfig(t *testing.T) {
	top, _ := installProject(t)
	c := installCases()[0]
	path := filepath.Join(top, filepath.FromSlash(c.rel))
	os.MkdirAll(filepath.Dir(path), 0o755)
	big := "{" + strings.Repeat(" ", MaxConfig) + "}"
	os.WriteFile(path, []byte(big), 0o644)
	if _, _, err := Install(top, c.rel, c.merge); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("Install over a %d-byte config: %v; want ErrTooLarge", len(big), err)
	}
}
