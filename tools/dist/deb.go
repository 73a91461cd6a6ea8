package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
)

// SystemAdapterDir is where the adapter packages put their binaries:
// host/adapter.SystemDir, which discovery searches after PATH and
// $BINKY_HOME/adapters.
const SystemAdapterDir = "/usr/lib/binky/adapters"

// TmpfilesConf is the binky package's tmpfiles.d entry: systemd-tmpfiles
// makes binky's machine-wide port lease directory root's, sticky and
// world-writable (at boot, and at install through the postinst), so that
// every user's binky trusts it (host/ports: a lease directory another
// non-root user owns is refused). Its own line also keeps /tmp's
// age-based cleanup out of it.
const TmpfilesConf = "/usr/lib/tmpfiles.d/binky.conf"

const tmpfilesText = `# binky's machine-wide port lease directory (host/ports, docs/packaging.md):
# owned by root, sticky and world-writable, one subdirectory per user.
d /tmp/binky-port-leases 1777 root root -
`

// postinst applies TmpfilesConf at install, so the directory exists (or
// becomes root's) before the next boot.
const postinst = `#!/bin/sh
set -e
if [ "$1" = configure ] && command -v systemd-tmpfiles >/dev/null 2>&1; then
	systemd-tmpfiles --create ` + TmpfilesConf + ` || true
fi
`

const (
	maintainer = "Binky maintainers <binky@binkyhq.invalid>"
	homepage   = "https://github.com/binkyhq/binky"
)

// debs writes the binky package and one binky-adapter-<family> package per
// adapter module for p. Binaries are static (CGO_ENABLED=0): no package
// depends on anything, not even libc, and each owns only its own files.
func (c *config) debs(p Platform, bins built, mods []family, x *extras) error {
	stage := filepath.Join(c.work, "deb", p.Arch)
	// binky: the CLI and the daemon, man pages, completions.
	var contents files.Contents
	for _, b := range []string{"binky", "binkyd"} {
		contents = append(contents, c.file(bins[b], "/usr/bin/"+b, 0o755))
	}
	for name, b := range x.man {
		sec := name[strings.LastIndexByte(name, '.')+1:]
		src, err := stageFile(stage, name+".gz", gzipped(b))
		if err != nil {
			return err
		}
		contents = append(contents, c.file(src, "/usr/share/man/man"+sec+"/"+name+".gz", 0o644))
	}
	completionDirs := map[string]string{
		"bash": "/usr/share/bash-completion/completions/binky",
		"zsh":  "/usr/share/zsh/vendor-completions/_binky",
		"fish": "/usr/share/fish/vendor_completions.d/binky.fish",
	}
	for sh, dst := range completionDirs {
		src, err := stageFile(stage, "completion."+sh, x.completions[sh])
		if err != nil {
			return err
		}
		contents = append(contents, c.file(src, dst, 0o644))
	}
	conf, err := stageFile(stage, "binky.tmpfiles", []byte(tmpfilesText))
	if err != nil {
		return err
	}
	contents = append(contents, c.file(conf, TmpfilesConf, 0o644))
	script, err := stageFile(stage, "binky.postinst", []byte(postinst))
	if err != nil {
		return err
	}
	desc := "worlds per git worktree: ports, processes, URLs and database slices\n" +
		"Binky gives every git worktree of a repository its own running world: a\n" +
		"block of ports, supervised processes, stable .localhost URLs and an\n" +
		"isolated slice of the servers already running. Adapters, packaged as\n" +
		"binky-adapter-<family>, carve the slices."
	// git makes and lists the worktrees; sh runs every service and hook.
	if err := c.deb(p, stage, "binky", desc, contents, nfpm.Scripts{PostInstall: script}, binkyDepends); err != nil {
		return err
	}
	for _, f := range mods {
		var contents files.Contents
		for _, b := range f.Binaries {
			contents = append(contents, c.file(bins[b], SystemAdapterDir+"/"+b, 0o755))
		}
		names := make([]string, len(f.Binaries))
		for i, b := range f.Binaries {
			names[i] = strings.TrimPrefix(b, "binky-adapter-")
		}
		desc := fmt.Sprintf("Binky adapter%s for %s\n"+
			"Installs %s into %s, where binky finds\n"+
			"adapters without any change to PATH.", plural(len(names)), strings.Join(names, ", "),
			strings.Join(f.Binaries, ", "), SystemAdapterDir)
		// An adapter is run by binky: nothing else uses it.
		if err := c.deb(p, stage, "binky-adapter-"+f.Name, desc, contents, nfpm.Scripts{}, []string{"binky"}); err != nil {
			return err
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// binkyDepends are the packages binky's own package depends on.
var binkyDepends = []string{"git"}

// deb writes one package depending on depends, adding its copyright file.
func (c *config) deb(p Platform, stage, name, desc string, contents files.Contents, scripts nfpm.Scripts, depends []string) error {
	copyright := fmt.Sprintf("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"+
		"Upstream-Name: binky\nSource: %s\n\nFiles: *\nCopyright: The Binky authors\nLicense: Apache-2.0\n"+
		" On Debian systems, the full text of the Apache License 2.0 is in\n /usr/share/common-licenses/Apache-2.0.\n", homepage)
	src, err := stageFile(stage, name+".copyright", []byte(copyright))
	if err != nil {
		return err
	}
	contents = append(contents, c.file(src, "/usr/share/doc/"+name+"/copyright", 0o644))
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:          name,
		Arch:          p.Arch,
		Platform:      "linux",
		Version:       debVersion(c.version),
		VersionSchema: "none",
		Section:       "devel",
		Priority:      "optional",
		Maintainer:    maintainer,
		Description:   desc,
		Vendor:        "Binky",
		Homepage:      homepage,
		License:       "Apache-2.0",
		MTime:         c.mtime,
		Overridables:  nfpm.Overridables{Contents: contents, Umask: 0o022, Scripts: scripts, Depends: depends},
	})
	if err := nfpm.PrepareForPackager(info, "deb"); err != nil {
		return fmt.Errorf("package %s: %w", name, err)
	}
	pkgr, err := nfpm.Get("deb")
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(c.out, pkgr.ConventionalFileName(info)))
	if err != nil {
		return err
	}
	if err := pkgr.Package(info, f); err != nil {
		f.Close()
		return fmt.Errorf("package %s: %w", name, err)
	}
	return f.Close()
}

// file is one regular file of a package, with the build's time.
func (c *config) file(src, dst string, mode os.FileMode) *files.Content {
	return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode, MTime: c.mtime, Owner: "root", Group: "root"}}
}

func stageFile(dir, name string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, b, 0o644)
}

// debVersion makes a Debian version of a git describe: no leading v, and
// one that does not start with a digit (a bare commit) sorts below 0.0.1.
func debVersion(v string) string {
	release := isRelease(v)
	v = strings.ReplaceAll(strings.TrimPrefix(v, "v"), "-", ".")
	if !release {
		v = "0.0.0~" + v
	}
	return v
}

// releaseVersion is a tag's version: v1.2.3 and what git describe adds.
var releaseVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+`)

// isRelease tells a tagged version from a bare commit (86de5d5).
func isRelease(v string) bool { return releaseVersion.MatchString(v) }
