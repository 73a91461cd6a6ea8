package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file of an archive.
type entry struct {
	name string // slash-separated, relative
	mode int64  // 0644 or 0755
	data []byte
}

// tarGz writes entries, sorted by name, as a gzipped tar whose every header
// carries mtime, uid and gid 0 and no user names: the same entries give the
// same bytes.
func tarGz(file string, mtime time.Time, entries []entry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // no name, no time in the gzip header
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, e := range entries {
		// Parent directories first, once each.
		var parents []string
		for d := path.Dir(e.name); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// zipFile writes entries, sorted, with mtime on each.
func zipFile(file string, mtime time.Time, entries []entry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(e.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// source writes binky-<version>.src.tar.gz: every file git tracks, as it
// is in the checkout, under binky-<version>/. It holds every module: the root, sdk, plugins/*,
// tools/dist.
func (c *config) source() error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached")
	cmd.Dir = c.root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("source tarball: git ls-files: %w", err)
	}
	prefix := "binky-" + c.version + "/"
	var entries []entry
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || strings.HasPrefix(name, "dist/") || strings.HasPrefix(name, "bin/") {
			continue
		}
		p := filepath.Join(c.root, filepath.FromSlash(name))
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the checkout, or a symlink
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		entries = append(entries, entry{name: prefix + name, mode: mode, data: b})
	}
	return tarGz(filepath.Join(c.out, "binky-"+c.version+".src.tar.gz"), c.mtime, entries)
}

// archive writes binky_<version>_<os>_<arch>.tar.gz (.zip on Windows):
// bin/ with every binary, adapters included, man/, completions/, LICENSE,
// README.md. Adapters sit next to binky in bin/, so unpacking it and
// putting bin/ on PATH is a whole install.
func (c *config) archive(p Platform, bins built, x *extras) error {
	base := fmt.Sprintf("binky_%s_%s_%s", c.version, p.OS, p.Arch)
	var entries []entry
	for name, file := range bins {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		entries = append(entries, entry{name: base + "/bin/" + p.exe(name), mode: 0o755, data: b})
	}
	for name, b := range x.man {
		sec := name[strings.LastIndexByte(name, '.')+1:]
		entries = append(entries, entry{name: base + "/man/man" + sec + "/" + name, mode: 0o644, data: b})
	}
	for sh, b := range x.completions {
		entries = append(entries, entry{name: base + "/completions/" + completionName(sh), mode: 0o644, data: b})
	}
	entries = append(entries,
		entry{name: base + "/LICENSE", mode: 0o644, data: x.license},
		entry{name: base + "/README.md", mode: 0o644, data: x.readme})
	if p.OS == "windows" {
		return zipFile(filepath.Join(c.out, base+".zip"), c.mtime, entries)
	}
	return tarGz(filepath.Join(c.out, base+".tar.gz"), c.mtime, entries)
}

// completionName is the file name each shell's loader looks for.
func completionName(sh string) string {
	switch sh {
	case "zsh":
		return "_binky"
	case "fish":
		return "binky.fish"
	}
	return "binky"
}

// gzipped compresses b reproducibly (no name, no time in the header).
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.Write(b)
	gz.Close()
	return buf.Bytes()
}
