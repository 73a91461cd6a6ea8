package main

import (
	"bytes"
	"os"
	"path/filepath"
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
