package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
)

// TestFollowRedacted: -f masks a secret wrapped over two lines that are
// written to the log at different moments, prints the line that is not a
// secret's start at once, and prints a held line once the log goes quiet.
func TestFollowRedacted(t *testing.T) {
	t.Parallel()
	const secret = "F0llow-S3cret-Value"
	path := filepath.Join(t.TempDir(), "svc.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var got []string
	lines := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		// Ten lines of context: whether Follow opens the log before or
		// after the first write (a busy machine may run this goroutine
		// late), it prints the same lines.
		done <- followRedacted(ctx, path, 10, redact.New(secret), func(l string) error {
			mu.Lock()
			got = append(got, l)
			mu.Unlock()
			return nil
		})
	}()
	waitFor := func(what string, ok func([]string) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if ok(lines()) {
				return
			}
		}
		t.Fatalf("%s: got %q", what, lines())
	}
	f.WriteString("plain line\ntoken F0llow-S3cr\n")
	waitFor("the plain line", func(l []string) bool { return len(l) >= 1 && l[0] == "plain line" })
	f.WriteString("et-Value rest\n")
	waitFor("the wrapped secret", func(l []string) bool { return len(l) >= 2 })
	if l := lines(); l[1] != "token *** rest" {
		t.Errorf("wrapped secret printed as %q; want %q", l[1], "token *** rest")
	}
	f.WriteString("ends with F0llow\n")
	waitFor("the held line after a quiet moment", func(l []string) bool { return len(l) >= 3 })
	if l := lines(); l[2] != "ends with ***" {
		t.Errorf("held line printed as %q; want %q", l[2], "ends with ***")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, l := range lines() {
		if strings.Contains(l, "S3cr") {
			t.Errorf("printed %q, a piece of the secret", l)
		}
	}
}

// TestLogRedactor: the redactor logs builds knows every world's env
// secrets and the passwords in adapter addresses and values.
func TestLogRedactor(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ctx := t.Context()
	reg, err := registry.Open(ctx, filepath.Join(home, registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "main", Branch: "main", Path: home, State: "up"})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.SetWorktreeSecrets(ctx, wt.ID, []string{"Env-S3cret-1"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.UpsertService(ctx, &registry.Service{WorktreeID: wt.ID, Name: "db", Kind: "adapter", State: "running",
		Address: "postgres://acme_main:Sl1ce-Pw%2F9@127.0.0.1:5432/acme_main",
		Values:  map[string]string{"dsn": "acme:My-Dsn-Pw@tcp(127.0.0.1:3306)/acme_main"}}); err != nil {
		t.Fatal(err)
	}
	reg.Close()
	red, err := logRedactor(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	in := "env Env-S3cret-1 slice Sl1ce-Pw/9 dsn My-Dsn-Pw db acme_main"
	if got, want := red.String(in), "env *** slice *** dsn *** db acme_main"; got != want {
		t.Errorf("String(%q) = %q; want %q", in, got, want)
	}
}
