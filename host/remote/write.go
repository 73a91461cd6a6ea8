package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/internal/tomlstr"
)

// Save writes f to f.Path (0600, through a temporary file renamed into
// place), hosts in name order. Comments of a hand-edited file are not
// kept: `binky host add|remove` and the first push to a host rewrite it.
func (f *File) Save() error {
	var b strings.Builder
	b.WriteString("# Hosts binky may drive over SSH (binky host add|list|check|remove).\n")
	b.WriteString("# Your own file: never commit it. See docs/remote.md.\n")
	for _, name := range f.Names() {
		b.WriteString(f.Hosts[name].render())
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".hosts-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}

// render is h as a [hosts.<name>] table.
func (h *Host) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[hosts.%s]\n", h.Name)
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-10s = %s\n", k, tomlstr.Quote(v))
		}
	}
	kv("ssh", h.SSH)
	kv("identity", h.Identity)
	kv("ssh_config", h.SSHConfig)
	kv("home", h.Home)
	kv("binky", h.Binky)
	if len(h.Repos) > 0 {
		var parts []string
		for _, p := range sortedKeys(h.Repos) {
			parts = append(parts, tomlstr.Quote(p)+" = "+tomlstr.Quote(h.Repos[p]))
		}
		fmt.Fprintf(&b, "%-10s = { %s }\n", "repos", strings.Join(parts, ", "))
	}
	return b.String()
}

// Render is h as hosts.toml writes it (one [hosts.<name>] table).
func Render(h *Host) []byte { return []byte(h.render()) }
