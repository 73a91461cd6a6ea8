package world

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/registry"
)

// TestBrowserLogOfAWorld: the proxy's entries land in the world's log
// directory (the proxy's notes past the rate too), up marks the log of a
// project that keeps one, and verify counts the errors since that mark.
func TestBrowserLogOfAWorld(t *testing.T) {
	e := &Engine{home: t.TempDir(), log: hclog.NewNullLogger()}
	e.browser.Rate, e.browser.Burst = 1, 2
	dir := e.logDir("acme", "main")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	on := &config.Config{Agents: config.Agents{BrowserLogs: true}}
	rec := &registry.Worktree{Project: "acme", Name: "main"}
	route := proxy.Route{Project: "acme", Worktree: "main", Service: "web"}
	page := func(msg string) browserlog.Entry {
		return browserlog.Entry{Service: "web", Kind: browserlog.KindConsole, Message: msg}
	}
	sink := e.BrowserLogs()
	sink.BrowserLog(route, []browserlog.Entry{page("before up")})
	e.markBrowserUp(on, "acme", "main")
	e.markBrowserUp(&config.Config{}, "acme", "main") // a project without: no mark
	sink.BrowserLog(route, []browserlog.Entry{page("one"), page("two"), page("past the rate"),
		{Service: "web", Kind: browserlog.KindNote, Message: "no script in web's pages"}})
	if n := e.browserErrors(on, rec); n == nil || *n != 1 {
		t.Errorf("errors since up: %v; want 1 (the rate kept one of three after the mark)", n)
	}
	if n := e.browserErrors(&config.Config{}, rec); n != nil {
		t.Errorf("errors since up of a project without browser logs: %d; want none", *n)
	}
	got, _, err := browserlog.Read(dir, browserlog.Query{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, g := range got {
		kinds = append(kinds, string(g.Kind)+":"+g.Message)
	}
	want := "console:before up|up:up|note:no script in web's pages|console:one|note:2 entries dropped"
	if got := strings.Join(kinds, "|"); !strings.HasPrefix(got, want) {
		t.Errorf("browser log: %s; want %s…", got, want)
	}
}
