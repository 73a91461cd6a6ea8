package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/config"
)

// TestWorktreeTable: [worktree] decodes, and its mistakes are reported at
// their key: globs leaving the worktree, setup that will never re-run,
// setup naming a slice that does not exist yet.
func TestWorktreeTable(t *testing.T) {
	const head = "[project]\nname = \"acme\"\n\n[services.db]\nadapter = \"sqlite\"\n\n[services.web]\ncmd = \"run\"\nports = [\"http\"]\n\n[worktree]\n"
	cfg, ds, err := config.Parse("binky.toml", []byte(head+`copy = ["node_modules", "packages/*/node_modules", ".env.local"]
copy_from = "main"
setup = ["pnpm install --frozen-lockfile --port ${web.port}"]
inputs = ["pnpm-lock.yaml"]
timeout = "2m"
`))
	if err != nil || len(ds) != 0 {
		t.Fatalf("Parse: %v %v; want no diagnostics", err, ds)
	}
	w := cfg.Worktree
	if len(w.Copy) != 3 || w.CopyFrom != "main" || len(w.Setup) != 1 || w.Inputs[0] != "pnpm-lock.yaml" || w.SetupTimeout() != 2*time.Minute {
		t.Errorf("decoded %+v", w)
	}
	if d := (&config.Worktree{}).SetupTimeout(); d != config.DefaultSetupTimeout {
		t.Errorf("default timeout %v; want %v", d, config.DefaultSetupTimeout)
	}
	for _, tc := range []struct {
		body, sev, want string
	}{
		{`copy = ["../other/node_modules"]`, "error", "climbs out"},
		{`copy = ["/home/me/cache"]`, "error", "not relative"},
		{`copy = ["**"]`, "error", "whole worktree"},
		{`copy = [".git"]`, "error", "git's own"},
		{`copy = "node_modules"`, "error", "array of strings"},
		{`setup = ["make deps"]`, "warning", "never again"},
		{`setup = ["migrate ${db.url}"]` + "\ninputs = [\"x\"]", "error", "adapter service"},
		{`setup = ["echo ${self.port}"]` + "\ninputs = [\"x\"]", "error", "self"},
		{`copy_from = "main"`, "warning", "does nothing without copy"},
		{`setpu = ["x"]`, "error", "unknown key"},
		{`timeout = 30`, "error", "duration"},
	} {
		_, ds, err := config.Parse("binky.toml", []byte(head+tc.body+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		found := false
		for _, d := range ds {
			if string(d.Severity) == tc.sev && strings.Contains(d.Message, tc.want) && d.Line >= 12 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got %v; want a %s containing %q at the [worktree] line", tc.body, ds, tc.sev, tc.want)
		}
	}
}
