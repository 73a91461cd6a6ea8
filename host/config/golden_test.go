package config

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the .golden files under testdata")

// checkGolden compares got with testdata file golden, or rewrites it with
// -update.
var goldenPaths = regexp.MustCompile(`testdata/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`)

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden: %v (run go test ./host/config -update)", err)
	}
	// Goldens name files with /; the output uses the platform separator.
	if got != goldenPaths.ReplaceAllStringFunc(string(want), filepath.FromSlash) {
		t.Errorf("output differs from %s\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}

func configs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs in testdata/%s: %v", dir, err)
	}
	return files
}

func golden(file string) string { return strings.TrimSuffix(file, ".toml") + ".golden" }

// report renders what binky check prints for a file.
func report(ds Diagnostics, err error) string {
	if err != nil {
		return err.Error() + "\n"
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestInvalidGolden: every config under testdata/invalid is rejected with
// exactly the diagnostics in its .golden file.
func TestInvalidGolden(t *testing.T) {
	files := configs(t, "invalid")
	if len(files) < 30 {
		t.Errorf("got %d invalid configs; want at least 30", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, ds, err := Load(f)
			if err == nil && !ds.HasErrors() {
				t.Errorf("got no error for %s; want at least one", f)
			}
			out := report(ds, err)
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if !strings.HasPrefix(line, f+":") {
					t.Errorf("line %q does not start with %q", line, f+":")
				}
			}
			checkGolden(t, golden(f), out)
		})
	}
}

// TestWarnGolden: every config under testdata/warn is usable but draws
// exactly the warnings in its .golden file.
func TestWarnGolden(t *testing.T) {
	for _, f := range configs(t, "warn") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, ds, err := Load(f)
			if err != nil {
				t.Fatalf("got error %v; want none", err)
			}
			if errs, warns := ds.Count(); errs != 0 || warns == 0 {
				t.Errorf("got %d errors and %d warnings; want 0 and some:\n%s", errs, warns, report(ds, nil))
			}
			checkGolden(t, golden(f), report(ds, nil))
		})
	}
}

// TestValidGolden: every config under testdata/valid draws no diagnostic
// at all and decodes to exactly the structure in its .golden file.
func TestValidGolden(t *testing.T) {
	for _, f := range configs(t, "valid") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, ds, err := Load(f)
			if err != nil {
				t.Fatalf("got error %v; want none", err)
			}
			if len(ds) != 0 {
				t.Errorf("got diagnostics; want none:\n%s", report(ds, nil))
			}
			checkGolden(t, golden(f), dump(t, c))
		})
	}
}

// dump renders a Config as indented JSON with durations as strings.
func dump(t *testing.T, c *Config) string {
	t.Helper()
	type health struct {
		HTTP, TCP, Exec   string `json:",omitempty"`
		Timeout, Interval string
	}
	type service struct {
		Cmd, Adapter                       string            `json:",omitempty"`
		DependsOn                          []string          `json:",omitempty"`
		Cwd                                string            `json:",omitempty"`
		Env                                map[string]string `json:",omitempty"`
		EnvFile                            string            `json:",omitempty"`
		Ports                              []string          `json:",omitempty"`
		PortNames                          []string          `json:",omitempty"`
		URL                                string            `json:",omitempty"`
		Health                             *health           `json:",omitempty"`
		Restart                            string
		Watch                              []string `json:",omitempty"`
		StopSignal                         string   `json:",omitempty"`
		StopTimeout                        string
		Wake                               bool           `json:",omitempty"`
		IdleSuspend                        string         `json:",omitempty"`
		AdminURL, Migrate, Seed, CloneFrom string         `json:",omitempty"`
		Inputs                             []string       `json:",omitempty"`
		Timeout                            string         `json:",omitempty"`
		Config                             map[string]any `json:",omitempty"`
	}
	dur := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	out := struct {
		Project    Project
		Order      []string
		StartOrder [][]string
		Services   map[string]service
		Agents     Agents
		EnvNames   []string
		Profiles   map[string][]string `json:",omitempty"`
	}{Project: c.Project, Order: c.Order, StartOrder: c.StartOrder(), Services: map[string]service{}, Agents: c.Agents, EnvNames: c.EnvNames(), Profiles: c.Profiles}
	for name, s := range c.Services {
		if s.Name != name {
			t.Errorf("service %q has Name %q", name, s.Name)
		}
		o := service{
			Cmd: s.Cmd, Adapter: s.Adapter, DependsOn: s.DependsOn, Cwd: s.Cwd, Env: s.Env, EnvFile: s.EnvFile,
			Ports: s.Ports, PortNames: s.PortNames(), URL: s.URL, Restart: s.Restart, Watch: s.Watch,
			StopSignal: s.StopSignal, StopTimeout: dur(s.StopTimeout), AdminURL: s.AdminURL, Migrate: s.Migrate,
			Seed: s.Seed, CloneFrom: s.CloneFrom, Inputs: s.Inputs, Timeout: dur(s.Timeout), Config: s.Config,
			Wake: s.Wake, IdleSuspend: dur(s.IdleSuspend),
		}
		if h := s.Health; h != nil {
			o.Health = &health{HTTP: h.HTTP, TCP: h.TCP, Exec: h.Exec, Timeout: dur(h.Timeout), Interval: dur(h.Interval)}
		}
		out.Services[name] = o
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}
