package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// npmScope names the platform packages: @binkyhq/binky-<os>-<cpu>.
const npmScope = "@binkyhq"

// npmBinaries are what a platform package carries: the CLI, the daemon and
// the embedded default adapter (no server needed). Other adapters come
// from their own packages or PATH.
var npmBinaries = []string{"binky", "binkyd", "binky-adapter-sqlite"}

// npmPlatform maps a Go platform onto npm's os and cpu names.
func npmPlatform(p Platform) (os_, cpu string) {
	os_, cpu = p.OS, p.Arch
	if os_ == "windows" {
		os_ = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return os_, cpu
}

// npmVersion makes a semver of a git describe: v1.2.3 → 1.2.3; a bare
// commit → 0.0.0-dev.g<commit>.
func npmVersion(v string) string {
	if !isRelease(v) {
		return "0.0.0-dev.g" + strings.ReplaceAll(v, "-", ".")
	}
	return strings.TrimPrefix(v, "v")
}

// npmPlatform writes dist/npm/binkyhq-binky-<os>-<cpu>-<version>.tgz.
func (c *config) npmPlatform(p Platform, bins built) error {
	os_, cpu := npmPlatform(p)
	name := npmScope + "/binky-" + os_ + "-" + cpu
	pkg := map[string]any{
		"name":            name,
		"version":         npmVersion(c.version),
		"description":     fmt.Sprintf("The binky, binkyd and binky-adapter-sqlite binaries for %s %s (installed by the binky package).", os_, cpu),
		"license":         "Apache-2.0",
		"homepage":        homepage,
		"repository":      map[string]string{"type": "git", "url": "git+https://github.com/binkyhq/binky.git"},
		"os":              []string{os_},
		"cpu":             []string{cpu},
		"preferUnplugged": true,
	}
	b, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	entries := []entry{{name: "package/package.json", mode: 0o644, data: append(b, '\n')}}
	for _, n := range npmBinaries {
		data, err := os.ReadFile(bins[n])
		if err != nil {
			return err
		}
		entries = append(entries, entry{name: "package/bin/" + p.exe(n), mode: 0o755, data: data})
	}
	lic, err := os.ReadFile(filepath.Join(c.root, "LICENSE"))
	if err != nil {
		return err
	}
	entries = append(entries, entry{name: "package/LICENSE", mode: 0o644, data: lic},
		entry{name: "package/README.md", mode: 0o644, data: []byte("# " + name + "\n\nThe binaries of the `binky` npm package for " + os_ + " " + cpu + ". Install `binky`, not this.\n")})
	return c.npmTarball(name, entries)
}

// npmMain writes dist/npm/binky-<version>.tgz from npm/binky, with the
// version and one optional dependency per platform filled in.
func (c *config) npmMain() error {
	src := filepath.Join(c.root, "npm", "binky")
	raw, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return err
	}
	var pkg map[string]any
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return fmt.Errorf("npm/binky/package.json: %w", err)
	}
	ver := npmVersion(c.version)
	pkg["version"] = ver
	opt := map[string]string{}
	for _, p := range c.platforms {
		os_, cpu := npmPlatform(p)
		opt[npmScope+"/binky-"+os_+"-"+cpu] = ver
	}
	pkg["optionalDependencies"] = opt
	b, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	entries := []entry{{name: "package/package.json", mode: 0o644, data: append(b, '\n')}}
	for _, f := range []struct {
		rel  string
		mode int64
	}{{"bin/binky.js", 0o755}, {"README.md", 0o644}} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.rel)))
		if err != nil {
			return err
		}
		entries = append(entries, entry{name: "package/" + f.rel, mode: f.mode, data: data})
	}
	lic, err := os.ReadFile(filepath.Join(c.root, "LICENSE"))
	if err != nil {
		return err
	}
	entries = append(entries, entry{name: "package/LICENSE", mode: 0o644, data: lic})
	return c.npmTarball("binky", entries)
}

// npmTarball writes what `npm pack` would: package/… in a gzipped tar,
// named as npm names it (@scope/name → scope-name-<version>.tgz).
func (c *config) npmTarball(name string, entries []entry) error {
	dir := filepath.Join(c.out, "npm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-") + "-" + npmVersion(c.version) + ".tgz"
	return tarGz(filepath.Join(dir, file), c.mtime, entries)
}
