package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParse decodes and validates arbitrary input. It must never panic,
// every problem must be one line with a position, and a config without
// errors must be internally consistent.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.toml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ds, err := Parse("f.toml", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("got %T %v; want a *LoadError", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "f.toml:") {
				t.Fatalf("error %q is not one line starting with the file name", err)
			}
			if c != nil || ds != nil {
				t.Fatalf("got a config or diagnostics with an error")
			}
			return
		}
		for _, d := range ds {
			if d.File != "f.toml" || d.Line < 1 || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
			if s := d.String(); strings.ContainsAny(s, "\n\r") {
				t.Fatalf("diagnostic %q spans lines", s)
			}
		}
		if c == nil {
			t.Fatalf("got no config and no error")
		}
		if len(c.Order) != len(c.Services) {
			t.Fatalf("Order %v does not match %d services", c.Order, len(c.Services))
		}
		var flat []string
		for _, level := range c.StartOrder() {
			if len(level) == 0 {
				t.Fatalf("StartOrder has an empty level")
			}
			flat = append(flat, level...)
		}
		if !sameSet(flat, c.Order) {
			t.Fatalf("StartOrder %v is not a permutation of %v", flat, c.Order)
		}
		_ = c.EnvNames()
		if ds.HasErrors() {
			return
		}
		for _, name := range c.Order {
			s := c.Services[name]
			if s == nil || s.Name != name || (s.Cmd == "") == (s.Adapter == "") {
				t.Fatalf("service %q is not exactly one of cmd and adapter: %+v", name, s)
			}
			if !slices.Contains([]string{RestartOnFailure, RestartAlways, RestartNever}, s.Restart) || s.StopTimeout <= 0 {
				t.Fatalf("service %q has restart %q stop_timeout %v", name, s.Restart, s.StopTimeout)
			}
			if s.IsAdapter() && len(s.PortNames()) != 0 {
				t.Fatalf("adapter %q asks for ports", name)
			}
			for _, dep := range s.DependsOn {
				if c.Services[dep] == nil || dep == name {
					t.Fatalf("service %q depends on %q", name, dep)
				}
				if c.Services[dep].Wake && !s.Wake {
					t.Fatalf("service %q starts with the world but depends on the wake service %q", name, dep)
				}
			}
			if (s.Wake && (s.IsAdapter() || s.URL == "")) || (s.IdleSuspend != 0 && (!s.Wake || s.IdleSuspend < 0)) {
				t.Fatalf("service %q: wake %v idle_suspend %v url %q adapter %q", name, s.Wake, s.IdleSuspend, s.URL, s.Adapter)
			}
		}
		// A profile names services only, and what it needs is closed
		// under depends_on.
		for name, list := range c.Profiles {
			if len(list) == 0 {
				t.Fatalf("profile %q has no services", name)
			}
			needs := c.Needs(list)
			for _, n := range needs {
				for _, dep := range c.Services[n].DependsOn {
					if !slices.Contains(needs, dep) {
						t.Fatalf("profile %q needs %q but not its dependency %q", name, n, dep)
					}
				}
			}
			for _, svc := range list {
				if !slices.Contains(needs, svc) {
					t.Fatalf("profile %q names %q, which is not a service", name, svc)
				}
			}
		}
		// Dependencies start in strictly earlier levels.
		level := map[string]int{}
		for i, l := range c.StartOrder() {
			for _, n := range l {
				level[n] = i
			}
		}
		for _, name := range c.Order {
			for _, dep := range c.Services[name].DependsOn {
				if level[dep] >= level[name] {
					t.Fatalf("%q (level %d) does not start after %q (level %d)", name, level[name], dep, level[dep])
				}
			}
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
