package mcp

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

func TestParseWorldURI(t *testing.T) {
	for _, tt := range []struct {
		uri, project, worktree, what string
		ok                           bool
	}{
		{worldURI("shop", "feat-a", "env"), "shop", "feat-a", "env", true},
		{worldURI("shop", "a/b c", "logs"), "shop", "a/b c", "logs", true},
		{"binky://worlds/shop/feat-a/secrets", "", "", "", false},
		{"binky://worlds/shop/env", "", "", "", false},
		{"binky://worlds//x/env", "", "", "", false},
		{"file:///etc/passwd", "", "", "", false},
		{"binky://worlds/%zz/x/env", "", "", "", false},
	} {
		p, w, what, err := parseWorldURI(tt.uri)
		if (err == nil) != tt.ok || p != tt.project || w != tt.worktree || what != tt.what {
			t.Errorf("parseWorldURI(%s) = %q, %q, %q, %v; want %q, %q, %q, ok %v", tt.uri, p, w, what, err, tt.project, tt.worktree, tt.what, tt.ok)
		}
	}
}

// FuzzParseWorldURI: a resource URI comes from the client; whatever it
// accepts names a world and a view, and round-trips.
func FuzzParseWorldURI(f *testing.F) {
	f.Add("binky://worlds/shop/feat-a/env")
	f.Add("binky://worlds/a%2Fb/c/logs")
	f.Fuzz(func(t *testing.T, uri string) {
		p, w, what, err := parseWorldURI(uri)
		if err != nil {
			return
		}
		if p == "" || w == "" || (what != "env" && what != "logs") {
			t.Fatalf("parseWorldURI(%q) accepted %q %q %q", uri, p, w, what)
		}
		p2, w2, what2, err := parseWorldURI(worldURI(p, w, what))
		if err != nil || p2 != p || w2 != w || what2 != what {
			t.Fatalf("round trip of %q: %q %q %q %v", uri, p2, w2, what2, err)
		}
	})
}

func TestPortsOf(t *testing.T) {
	w := api.World{Project: "shop", Worktree: "feat-a", State: "up", Ports: [2]int{4100, 4109}, Services: []api.Service{
		{Name: "web", State: "running", Port: 4100, URL: "http://web.feat-a.shop.localhost:7355"},
		{Name: "db", State: "provisioned", Address: "postgres://shop_feat_a@127.0.0.1:5432/shop_feat_a"},
		{Name: "worker", State: "running"},
	}}
	r := portsOf(w)
	if len(r.Services) != 3 || r.Services[2].Name != "worker" || r.Services[1].Direct != "http://127.0.0.1:4100" {
		t.Fatalf("portsOf = %+v", r)
	}
	s := portsSummary(r)
	for _, want := range []string{"shop/feat-a (up)", "ports 4100-4109", "web http://web.feat-a.shop.localhost:7355 (port 4100)", "db postgres://"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
	}
}
