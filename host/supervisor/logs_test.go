package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

func TestReadLogsAcrossGenerations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "api.log")
	writeFile(t, path+".3", numbered(1, 3))
	writeFile(t, path+".2", numbered(4, 6))
	writeFile(t, path+".1", numbered(7, 9)+"partial") // a final line without \n
	writeFile(t, path, numbered(10, 12))
	tests := []struct {
		n    int
		want string
	}{
		{0, "l1 l2 l3 l4 l5 l6 l7 l8 l9 partial l10 l11 l12"},
		{1, "l12"},
		{3, "l10 l11 l12"},
		{4, "partial l10 l11 l12"},
		{6, "l8 l9 partial l10 l11 l12"},
		{100, "l1 l2 l3 l4 l5 l6 l7 l8 l9 partial l10 l11 l12"},
	}
	for _, tt := range tests {
		got, err := ReadLogs(path, tt.n)
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("ReadLogs(n=%d) = %q, %v; want %q", tt.n, got, err, tt.want)
		}
	}
	if got, err := ReadLogs(filepath.Join(dir, "missing.log"), 5); err != nil || len(got) != 0 {
		t.Errorf("ReadLogs(missing) = %q, %v; want nothing", got, err)
	}
}

func TestReadLogsLargeTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.log")
	writeFile(t, path, numbered(1, 100000)) // several read chunks
	got, err := ReadLogs(path, 20000)
	if err != nil || len(got) != 20000 || got[0] != "l80001" || got[19999] != "l100000" {
		t.Fatalf("ReadLogs = %d lines from %q, %v; want l80001…l100000", len(got), first(got), err)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestRollLogKeepsThreeGenerations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "api.log")
	for i := 1; i <= 5; i++ {
		writeFile(t, path, fmt.Sprintf("gen%d\n", i))
		if err := rollLog(path, 1); err != nil {
			t.Fatal(err)
		}
	}
	for g, want := range map[string]string{".1": "gen5\n", ".2": "gen4\n", ".3": "gen3\n"} {
		if b, err := os.ReadFile(path + g); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", g, b, err, want)
		}
	}
	for _, gone := range []string{path, path + ".4"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s exists; want it gone", gone)
		}
	}
	// At or below the limit nothing moves.
	writeFile(t, path, "small\n")
	if err := rollLog(path, 6); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "small\n" {
		t.Errorf("a log at the limit was rolled")
	}
}

func TestFollowAcrossRoll(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "api.log")
	writeFile(t, path, numbered(1, 10))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, 3, func(l string) error { got <- l; return nil })
	}()
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case l := <-got:
				if l != w {
					t.Fatalf("Follow emitted %q; want %q", l, w)
				}
			case <-time.After(hang):
				t.Fatalf("Follow emitted nothing for %s; want %q", hang, w)
			}
		}
	}
	expect("l8", "l9", "l10")
	appendFile(t, path, "l11\nl1")
	expect("l11")
	appendFile(t, path, "2\nhalf")
	expect("l12")
	// The service restarts: the log rolls under the follower, which drains
	// the old file (its unfinished last line too) and moves to the new one.
	if err := rollLog(path, 1); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "l13\nl14\n")
	expect("half", "l13", "l14")
	// A log removed and written again is picked up from its start.
	if err := rollLog(path, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	appendFile(t, path, "l15\n")
	expect("l15")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow = %v; want nil after cancel", err)
	}
}

func TestFollowWaitsForTheLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "logs", "later.log")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Follow(ctx, path, 10, func(l string) error { got <- l; return nil })
	}()
	// Follow lets go of the log before the directory is removed (Windows
	// cannot remove an open file's directory).
	defer func() { cancel(); <-done }()
	time.Sleep(50 * time.Millisecond)
	appendFile(t, path, "first\n")
	select {
	case l := <-got:
		if l != "first" {
			t.Errorf("Follow emitted %q; want first", l)
		}
	case <-time.After(hang):
		t.Fatal("Follow never saw the log appear")
	}
}

func TestRemoveLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "api.log")
	for _, f := range []string{path, path + ".1", path + ".3"} {
		writeFile(t, f, "x\n")
	}
	writeFile(t, filepath.Join(dir, "web.log"), "keep\n")
	if err := RemoveLogs(path); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "web.log" {
		t.Errorf("left %v; want only web.log", ents)
	}
}
