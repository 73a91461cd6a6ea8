package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/supervisor"
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
		done <- followRedacted(ctx, path, 10, time.Time{}, redact.New(secret), func(l supervisor.Line) error {
			mu.Lock()
			got = append(got, l.Text)
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

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: ""},
		{in: "10m", want: now.Add(-10 * time.Minute)},
		{in: "1h30m", want: now.Add(-90 * time.Minute)},
		{in: "2026-12-07T11:00:00Z", want: time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)},
		{in: "2026-12-07T11:00:00.5+01:00", want: time.Date(2026, 12, 7, 10, 0, 0, 5e8, time.UTC)},
		{in: "-5m", bad: true},
		{in: "yesterday", bad: true},
	} {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.bad || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"10m", "2026-12-07T11:00:00Z", "2026-12-07", "", "1e9h"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err == nil && s != "" && got.IsZero() {
			t.Errorf("parseSince(%q): no error and no time", s)
		}
	})
}

// statusByRef answers status as the daemon would for the fixture: world
// acme/feat-a-1234 by its name or, with Here, as the world the caller
// stands in; any other name is not found.
type statusByRef struct{ world api.World }

func (f *statusByRef) Call(_ context.Context, op string, args any, _ api.Handlers, out any) error {
	a := args.(api.StatusArgs)
	if a.Name != "" && a.Name != f.world.Worktree {
		return &api.Error{Code: api.CodeNotFound, Message: "no world " + a.Name}
	}
	*(out.(*api.StatusResult)) = api.StatusResult{Worlds: []api.World{f.world}}
	return nil
}

// TestLogsServiceByName (issue 40): `binky logs api` inside a worktree is
// the api service of the world you stand in; a name that is neither a
// world nor a service still fails naming the world.
func TestLogsServiceByName(t *testing.T) {
	home := t.TempDir()
	repo, wtPath := gitWorld(t)
	fixtureHome(t, home, repo, wtPath).Close()
	withSeams(t, func(*globals) (statusCaller, error) { return &statusByRef{world: acmeWorld}, nil }, nil)
	out, _, err := runLogs(t, home, cli.Logs{Worktree: "api", Lines: -1})
	if err != nil {
		t.Fatalf("logs api: %v", err)
	}
	checkRedacted(t, "logs api", out)
	if strings.Contains(out, "api | ") {
		t.Errorf("logs api printed service prefixes (more than one service?): %q", out)
	}
	if _, _, err := runLogs(t, home, cli.Logs{Worktree: "nope", Lines: -1}); err == nil || !strings.Contains(err.Error(), "no world nope") {
		t.Errorf("logs nope: %v; want the daemon's not found", err)
	}
}

// TestLogsSinceAndTimestamps (issue 40): --since keeps the lines the log's
// time marks date after it, --timestamps starts each with its time, and
// --json carries the time.
func TestLogsSinceAndTimestamps(t *testing.T) {
	home := t.TempDir()
	repo, wtPath := gitWorld(t)
	fixtureHome(t, home, repo, wtPath).Close()
	withSeams(t, func(*globals) (statusCaller, error) { return &statusByRef{world: acmeWorld}, nil }, nil)
	path := filepath.Join(logview.Dir(home, "acme", "feat-a-1234"), "api.log")
	// Old lines, marked an hour ago; the fixture's lines after them.
	old := "old line one\nold line two\n"
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append([]byte(old), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.WriteFile(path+".idx", []byte(fmt.Sprintf("%d %d\n", len(old), hourAgo.UnixNano())), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runLogs(t, home, cli.Logs{Worktree: "feat-a-1234", Service: "api", Since: "10m", Lines: -1, Timestamps: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "old line") || !strings.Contains(out, "starting") {
		t.Errorf("logs --since 10m: %q; want the new lines only", out)
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d) starting$`)
	if first := strings.SplitN(out, "\n", 2)[0]; !stamp.MatchString(first) {
		t.Errorf("logs --timestamps: first line %q; want <RFC 3339> starting", first)
	}
	out, _, err = runLogs(t, home, cli.Logs{Worktree: "feat-a-1234", Service: "api", Lines: -1, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var first logLine
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil {
		t.Fatal(err)
	}
	if at, err := time.Parse(time.RFC3339, first.Time); err != nil || first.Line != "old line one" || at.Unix() != hourAgo.Unix() {
		t.Errorf("logs --json: first line %+v; want old line one dated %v", first, hourAgo.Format(time.RFC3339))
	}
	checkRedacted(t, "logs --json", out)
}
