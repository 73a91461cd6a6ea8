package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVersions(t *testing.T) {
	tests := []struct{ in, deb, npm string }{
		{"v1.2.3", "1.2.3", "1.2.3"},
		{"v1.2.3-4-gabcdef0", "1.2.3.4.gabcdef0", "1.2.3-4-gabcdef0"},
		{"86de5d5", "0.0.0~86de5d5", "0.0.0-dev.g86de5d5"},
		{"86de5d5-dirty", "0.0.0~86de5d5.dirty", "0.0.0-dev.g86de5d5.dirty"},
	}
	for _, tt := range tests {
		if got := debVersion(tt.in); got != tt.deb {
			t.Errorf("debVersion(%q): got %q; want %q", tt.in, got, tt.deb)
		}
		if got := npmVersion(tt.in); got != tt.npm {
			t.Errorf("npmVersion(%q): got %q; want %q", tt.in, got, tt.npm)
		}
	}
}

// TestArchivesReproducible: the same entries in any order give the same
// bytes, whenever they are written.
func TestArchivesReproducible(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Unix(1700000000, 0)
	a := []entry{{"x/b", 0o644, []byte("b")}, {"x/a/c", 0o755, []byte("c")}}
	b := []entry{a[1], a[0]}
	for _, f := range []func(string, time.Time, []entry) error{tarGz, zipFile} {
		p1, p2 := filepath.Join(dir, "1"), filepath.Join(dir, "2")
		if err := f(p1, mtime, append([]entry(nil), a...)); err != nil {
			t.Fatal(err)
		}
		if err := f(p2, mtime, append([]entry(nil), b...)); err != nil {
			t.Fatal(err)
		}
		x, _ := os.ReadFile(p1)
		y, _ := os.ReadFile(p2)
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("two writes of the same entries differ (%d and %d bytes)", len(x), len(y))
		}
	}
	if !bytes.Equal(gzipped([]byte("page")), gzipped([]byte("page"))) {
		t.Error("gzipped is not deterministic")
	}
}

// TestBinkyDebMakesLeaseDir: the binky package carries the tmpfiles.d
// entry that makes the port lease directory root's and sticky, and a
// postinst that applies it at install.
func TestBinkyDebMakesLeaseDir(t *testing.T) {
	dir := t.TempDir()
	c := &config{out: filepath.Join(dir, "out"), work: filepath.Join(dir, "work"), version: "v1.2.3", mtime: time.Unix(1700000000, 0)}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		t.Fatal(err)
	}
	bins := built{}
	for _, b := range []string{"binky", "binkyd"} {
		bins[b] = filepath.Join(dir, b)
		if err := os.WriteFile(bins[b], []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	x := &extras{man: map[string][]byte{}, completions: map[string][]byte{"bash": nil, "zsh": nil, "fish": nil}}
	if err := c.debs(Platform{"linux", "amd64"}, bins, nil, x); err != nil {
		t.Fatal(err)
	}
	debs, _ := filepath.Glob(filepath.Join(c.out, "binky_*.deb"))
	if len(debs) != 1 {
		t.Fatalf("packages %v; want one binky .deb", debs)
	}
	members := arMembers(t, debs[0])
	data := tarFiles(t, members, "data.tar")
	if got := string(data["./usr/lib/tmpfiles.d/binky.conf"]); !strings.Contains(got, "\nd /tmp/binky-port-leases 1777 root root -\n") {
		t.Errorf("%s in the package:\n%s\nwant the line d /tmp/binky-port-leases 1777 root root -", TmpfilesConf, got)
	}
	control := tarFiles(t, members, "control.tar")
	if got := string(control["./postinst"]); !strings.Contains(got, "systemd-tmpfiles --create "+TmpfilesConf) {
		t.Errorf("postinst:\n%s\nwant it to run systemd-tmpfiles --create %s", got, TmpfilesConf)
	}
	// Issue 40: the package declared no dependency, not even git.
	if got := string(control["./control"]); !strings.Contains(got, "\nDepends: git\n") {
		t.Errorf("control:\n%s\nwant Depends: git", got)
	}
}

// arMembers reads the members of an ar archive (a .deb) by name.
func arMembers(t *testing.T, path string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("!<arch>\n")) {
		t.Fatalf("%s is not an ar archive", path)
	}
	out := map[string][]byte{}
	for off := 8; off+60 <= len(b); {
		h := b[off : off+60]
		name := strings.TrimSuffix(strings.TrimSpace(string(h[:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(h[48:58])))
		if err != nil || off+60+size > len(b) {
			t.Fatalf("%s: bad ar header %q", path, h)
		}
		out[name] = b[off+60 : off+60+size]
		off += 60 + size + size%2
	}
	return out
}

// tarFiles reads the regular files of the gzipped tar member named
// prefix.gz.
func tarFiles(t *testing.T, members map[string][]byte, prefix string) map[string][]byte {
	t.Helper()
	raw, ok := members[prefix+".gz"]
	if !ok {
		t.Fatalf("no %s.gz in the package (members: %v)", prefix, slices.Collect(maps.Keys(members)))
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			out[h.Name] = b
		}
	}
}
