package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvFilePath(t *testing.T) {
	main, wt := t.TempDir(), t.TempDir()
	write := func(p string) {
		t.Helper()
		if err := os.WriteFile(p, []byte("A=1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(main, ".env"))
	write(filepath.Join(main, "both.env"))
	write(filepath.Join(wt, "both.env"))
	abs := filepath.Join(t.TempDir(), "abs", ".env") // absolute on every platform
	for _, tc := range []struct {
		p, root, main, want string
	}{
		{".env", wt, main, filepath.Join(main, ".env")},       // only the main worktree has it
		{"both.env", wt, main, filepath.Join(wt, "both.env")}, // the worktree's wins
		{"none.env", wt, main, filepath.Join(wt, "none.env")}, // neither: the worktree's, for the error
		{".env", wt, "", filepath.Join(wt, ".env")},           // main unknown
		{abs, wt, main, abs},
	} {
		if got := EnvFilePath(tc.p, tc.root, tc.main); got != tc.want {
			t.Errorf("EnvFilePath(%q) = %q; want %q", tc.p, got, tc.want)
		}
	}
}

func TestCheckEnvFilesIgnoredExplainsLookup(t *testing.T) {
	main, wt := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(main, ".env"), []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Parse("binky.toml", []byte("[project]\nname = \"a\"\nenv_file = \".env\"\n[services.w]\ncmd = \"x\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ds := CheckEnvFiles(filepath.Join(wt, "binky.toml"), EnvFileRoots{Root: wt, Main: main, Ignored: func(string) bool { return true }}, cfg)
	out := report(ds, nil)
	if ds.HasErrors() || !strings.Contains(out, "warning: project.env_file: env_file .env is git-ignored") || !strings.Contains(out, filepath.Join(main, ".env")) {
		t.Errorf("diagnostics:\n%s\nwant one warning explaining the lookup, naming %s", out, filepath.Join(main, ".env"))
	}
}
