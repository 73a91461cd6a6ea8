//go:build linux

package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testDebounce = 100 * time.Millisecond

// quiet waits long enough that a change already made would have fired.
func quiet() { time.Sleep(5 * testDebounce) }

func atomicSave(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatchRestartsOnceForAnAtomicSave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, d := range []string{"web", ".git", "docs"} {
		if err := os.MkdirAll(w.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.path("web/app.js"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	s := newSup(t, rec, Options{Debounce: testDebounce})
	spec := w.spec("web", `echo run >> runs; exec sleep 300`)
	spec.Watch = []string{"web/**", "**/*.go"}
	// The log inside the worktree must not restart the service it belongs to.
	spec.LogPath = w.path("web/web.log")
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventStarted, spec.Key, 1)

	// Nothing that does not match, nor .git, restarts it.
	for _, p := range []string{"docs/readme.md", ".git/index", ".git/x.go", "top.txt"} {
		if err := os.WriteFile(w.path(p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quiet()
	if n := rec.count(EventWatch, spec.Key); n != 0 {
		t.Fatalf("watch restarts after unwatched changes = %d; want 0", n)
	}

	atomicSave(t, w.path("web/app.js"), "v2")
	rec.waitEvent(t, EventStarted, spec.Key, 2)
	quiet()
	rec.mu.Lock()
	watch := rec.find(EventWatch, spec.Key)
	starts := rec.count(EventStarted, spec.Key)
	rec.mu.Unlock()
	if len(watch) != 1 || watch[0].Path != "web/app.js" || starts != 2 {
		t.Fatalf("watch events %+v, starts %d; want one restart for web/app.js", watch, starts)
	}
	logged, _ := ReadLogs(spec.LogPath, 0)
	if !containsLine(logged, LinePrefix) || !containsLine(logged, "web/app.js changed; restarting web") {
		t.Errorf("service log %q does not say why it restarted", logged)
	}

	// A directory created after the start is watched too, and a match at
	// any depth of **/*.go counts.
	if err := os.MkdirAll(w.path("web/sub/deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	quiet()
	atomicSave(t, w.path("web/sub/deeper/x.css"), "a{}")
	rec.waitEvent(t, EventStarted, spec.Key, 3)
	if err := os.MkdirAll(w.path("cmd/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	quiet()
	atomicSave(t, w.path("cmd/tool/main.go"), "package main")
	rec.waitEvent(t, EventStarted, spec.Key, 4)
	quiet()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var paths []string
	for _, ev := range rec.find(EventWatch, spec.Key) {
		paths = append(paths, ev.Path)
	}
	if want := "web/app.js web/sub/deeper/x.css cmd/tool/main.go"; strings.Join(paths, " ") != want {
		t.Errorf("watch restarts for %v; want %s", paths, want)
	}
	if exits := rec.exits[spec.Key]; len(exits) != 3 {
		t.Errorf("recorded exits = %d; want 3 (one per watch restart)", len(exits))
	}
}

func TestWatchDirCreatedWithFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Debounce: testDebounce})
	spec := w.spec("api", `exec sleep 300`)
	spec.Watch = []string{"src/**/*.py"}
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	// src does not exist at start; it arrives whole (a checkout, an mv).
	staged := filepath.Join(w.home, "staged")
	if err := os.MkdirAll(filepath.Join(staged, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "pkg", "m.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, w.path("src")); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventWatch, spec.Key, 1)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if ev := rec.find(EventWatch, spec.Key)[0]; ev.Path != "src/pkg/m.py" {
		t.Errorf("watch restart for %q; want src/pkg/m.py", ev.Path)
	}
}

func TestWatchMatching(t *testing.T) {
	t.Parallel()
	w := &watcher{root: "/wt", globs: []string{"web/**", "**/*.go", "cfg/*.toml"}, exclude: map[string]bool{"/wt/web/web.log": true}}
	for _, g := range w.globs {
		base := strings.Split(g, "/")[0]
		if strings.ContainsAny(base, "*") {
			base = "."
		}
		w.bases = append(w.bases, base)
	}
	tests := []struct {
		rel  string
		want bool
	}{
		{"web/app.js", true},
		{"web/a/b/c.css", true},
		{"main.go", true},
		{"x/y/z.go", true},
		{"cfg/app.toml", true},
		{"cfg/deep/app.toml", false},
		{"README.md", false},
		{".git/hooks/x.go", false},
		{"web/.git/config", false},
		{".binky/state.go", false},
		{"web/web.log", false},
	}
	for _, tt := range tests {
		if got := w.matches("/wt/"+tt.rel, tt.rel); got != tt.want {
			t.Errorf("matches(%q) = %v; want %v", tt.rel, got, tt.want)
		}
	}
	dirs := []struct {
		rel  string
		want bool
	}{
		{".", true}, {"web", true}, {"web/a", true}, {"cfg", true}, {"x/y", true}, {".git", false}, {"a/.git/b", false},
	}
	for _, tt := range dirs {
		if got := w.wantDir(tt.rel); got != tt.want {
			t.Errorf("wantDir(%q) = %v; want %v", tt.rel, got, tt.want)
		}
	}
	narrow := &watcher{root: "/wt", globs: []string{"web/src/**"}, bases: []string{"web/src"}}
	for rel, want := range map[string]bool{".": true, "web": true, "web/src": true, "web/src/a": true, "web/other": false, "api": false} {
		if got := narrow.wantDir(rel); got != want {
			t.Errorf("narrow wantDir(%q) = %v; want %v", rel, got, want)
		}
	}
}
