package ctl

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDaemonBinary: binkyd beside the caller wins over PATH; with neither,
// the error names both places.
func TestDaemonBinary(t *testing.T) {
	name := DaemonName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	here, onPath := t.TempDir(), t.TempDir()
	for _, d := range []string{here, onPath} {
		if err := os.WriteFile(filepath.Join(d, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", onPath)
	if got, err := DaemonBinary(filepath.Join(here, "binky")); err != nil || got != filepath.Join(here, name) {
		t.Errorf("beside: got %q, %v; want %q", got, err, filepath.Join(here, name))
	}
	lone := t.TempDir()
	if got, err := DaemonBinary(filepath.Join(lone, "binky")); err != nil || got != filepath.Join(onPath, name) {
		t.Errorf("on PATH: got %q, %v; want %q", got, err, filepath.Join(onPath, name))
	}
	t.Setenv("PATH", t.TempDir())
	_, err := DaemonBinary(filepath.Join(lone, "binky"))
	if err == nil || !strings.Contains(err.Error(), lone) || !strings.Contains(err.Error(), "PATH") {
		t.Errorf("missing: got %v; want an error naming %s and PATH", err, lone)
	}
}
