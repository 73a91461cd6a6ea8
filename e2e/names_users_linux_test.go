//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userNamesWorld: the same template and stable names in two homes of two
// users; web serves a directory naming its user.
const userNamesWorld = `
[project]
name         = "shnm"
port_range   = PORTRANGE
hostname     = "{service}.{worktree}.{project}"
stable_names = ["app"]

[services.web]
cmd    = "exec python3 -m http.server ${self.port} --bind 127.0.0.1 --directory SITE"
url    = "web"
health = "http://127.0.0.1:${self.port}/"
`

// TestNamesPerHomeTwoUsers: two users' homes on one machine, with the same
// template and stable names: each home hands out its own names (both
// worlds hold app, neither refused), each home's proxy serves its own
// world at the name and nothing of the other's, and one home's remove
// leaves the other's world and names alone.
func TestNamesPerHomeTwoUsers(t *testing.T) {
	needCommand(t, "curl", "apt-get install curl")
	needCommand(t, "python3", "apt-get install python3")
	leases := sharedLeases(t)
	type home struct {
		u    *unixUser
		e    *env
		addr string
	}
	var homes []*home
	for range 2 {
		u := newUnixUser(t)
		site := filepath.Join(u.base, "site")
		os.MkdirAll(site, 0o755)
		os.WriteFile(filepath.Join(site, "who-"+u.name), nil, 0o644)
		if err := chownTree(site, u); err != nil {
			t.Fatal(err)
		}
		e := newEnvAs(t, u, strings.ReplaceAll(userNamesWorld, "SITE", site), leases)
		e.must("up", "-q", "feat")
		homes = append(homes, &home{u: u, e: e})
	}
	for _, h := range homes {
		if got := namesStatus(t, h.e)["feat"].stable; got != "app" {
			t.Errorf("%s's world holds %q; want app (names are per home)", h.u.name, got)
		}
		addr, host := proxyOf(t, h.e, "feat")
		if host != "web.app."+h.e.project+".localhost" {
			t.Errorf("%s's web is at %s; want web.app."+h.e.project+".localhost", h.u.name, host)
		}
		h.addr = addr
	}
	if homes[0].addr == homes[1].addr {
		t.Fatalf("both homes' proxies at %s", homes[0].addr)
	}
	check := func(h *home) {
		t.Helper()
		code, body := fetchAs(t, h.u, h.addr, "web.app."+h.e.project+".localhost")
		if code != 200 || !strings.Contains(body, "who-"+h.u.name) {
			t.Errorf("%s's proxy for web.app."+h.e.project+".localhost: %d %.300q; want %s's site", h.u.name, code, body, h.u.name)
		}
		for _, o := range homes {
			if o != h && strings.Contains(body, "who-"+o.u.name) {
				t.Errorf("%s's proxy served %s's site", h.u.name, o.u.name)
			}
		}
	}
	for _, h := range homes {
		check(h)
	}
	homes[0].e.must("remove", "--force", "feat")
	check(homes[1])
	if got := namesStatus(t, homes[1].e)["feat"].stable; got != "app" {
		t.Errorf("after the other home's remove, %s's world holds %q; want app", homes[1].u.name, got)
	}
}
