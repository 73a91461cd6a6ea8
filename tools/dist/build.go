package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// family is one adapter module: one Debian package, one or more binaries.
type family struct {
	Dir      string   // plugins/<dir>
	Name     string   // the package is binky-adapter-<Name>
	Binaries []string // binky-adapter-<name>, sorted
}

// modules lists the adapter families under plugins/, each with the
// binaries under its cmd/.
func modules(root string) ([]family, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "plugins", "*", "go.mod"))
	if err != nil {
		return nil, err
	}
	var out []family
	for _, gm := range dirs {
		dir := filepath.Base(filepath.Dir(gm))
		bins, _ := filepath.Glob(filepath.Join(filepath.Dir(gm), "cmd", "binky-adapter-*"))
		f := family{Dir: dir, Name: strings.TrimSuffix(dir, "-adapters")}
		for _, b := range bins {
			f.Binaries = append(f.Binaries, filepath.Base(b))
		}
		sort.Strings(f.Binaries)
		if len(f.Binaries) > 0 {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no adapter modules under %s/plugins", root)
	}
	return out, nil
}

// built is one platform's binaries: file name (without .exe) → path.
type built map[string]string

// buildAll builds binky, binkyd and every adapter for p.
func (c *config) buildAll(p Platform, mods []family) (built, error) {
	dir := filepath.Join(c.work, p.OS+"_"+p.Arch)
	bins := built{}
	for _, name := range []string{"binky", "binkyd"} {
		out := filepath.Join(dir, p.exe(name))
		if err := c.goBuild(p, ".", "./cmd/"+name, out, true); err != nil {
			return nil, err
		}
		bins[name] = out
	}
	for _, f := range mods {
		for _, b := range f.Binaries {
			out := filepath.Join(dir, p.exe(b))
			if err := c.goBuild(p, filepath.Join("plugins", f.Dir), "./cmd/"+b, out, true); err != nil {
				return nil, err
			}
			bins[b] = out
		}
	}
	return bins, nil
}

// goBuild builds pkg of the module in moddir for p: -trimpath, no cgo,
// the version in the linker flags (binky's and the sdk's, which every
// adapter links), no VCS stamp (the flags carry the commit).
func (c *config) goBuild(p Platform, moddir, pkg, out string, strip bool) error {
	ld := fmt.Sprintf("-X github.com/binkyhq/binky/cmd/internal/cli.version=%[1]s -X github.com/binkyhq/binky/cmd/internal/cli.commit=%[2]s "+
		"-X github.com/binkyhq/binky/sdk.version=%[1]s -X github.com/binkyhq/binky/sdk.commit=%[2]s", c.version, c.commit)
	if strip {
		ld = "-s -w " + ld
	}
	cmd := exec.Command(goCmd(), "build", "-trimpath", "-buildvcs=false", "-ldflags", ld, "-o", out, pkg)
	cmd.Dir = filepath.Join(c.root, moddir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=", "GOWORK="+filepath.Join(c.root, "go.work"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s (%s) for %s: %w", pkg, moddir, p, err)
	}
	return nil
}

// extras are the files every archive and the binky package carry besides
// the binaries: man pages and completion scripts (made by a host build of
// binky from its own grammar), LICENSE and README.md.
type extras struct {
	man         map[string][]byte // binky.1, binky.toml.5
	completions map[string][]byte // bash, zsh, fish
	license     []byte
	readme      []byte
}

func (c *config) extras() (*extras, error) {
	e := &extras{man: map[string][]byte{}, completions: map[string][]byte{}}
	mandir := filepath.Join(c.work, "man")
	cmd := exec.Command(c.hostBin, "__man", "--out", mandir, "--config", filepath.Join(c.root, "docs", "config.md"))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("man pages: %w", err)
	}
	for _, n := range []string{"binky.1", "binky.toml.5"} {
		b, err := os.ReadFile(filepath.Join(mandir, n))
		if err != nil {
			return nil, err
		}
		e.man[n] = b
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		cmd := exec.Command(c.hostBin, "completion", sh)
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s completion: %w", sh, err)
		}
		e.completions[sh] = out.Bytes()
	}
	var err error
	if e.license, err = os.ReadFile(filepath.Join(c.root, "LICENSE")); err != nil {
		return nil, err
	}
	if e.readme, err = os.ReadFile(filepath.Join(c.root, "README.md")); err != nil {
		return nil, err
	}
	return e, nil
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func hostOS() string   { return runtime.GOOS }
func hostArch() string { return runtime.GOARCH }

// gitOut runs git in dir and returns its trimmed output, or "".
func gitOut(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
