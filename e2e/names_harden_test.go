//go:build linux

package e2e

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Names meet a killed daemon and a renamed world.

const namesKillConfig = `
[project]
name         = "nmk"
port_range   = PORTRANGE
stable_names = ["app", "app2"]

[services.web]
cmd    = "echo started >> DIR/starts; exec python3 -m http.server ${self.port} --bind 127.0.0.1 --directory DIR"
url    = "web"
health = { exec = "test -f DIR/open" }
`

// TestNamesDaemonKilledAfterClaim: the daemon is killed after an up
// claimed the world's stable name and hostname, while web starts. The
// next up of that world keeps its own claim (not refused as a collision
// with itself) and serves at it, with one process of web; a second world
// gets the next name.
func TestNamesDaemonKilledAfterClaim(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	dir := t.TempDir()
	e := newEnv(t, strings.ReplaceAll(namesKillConfig, "DIR", dir))
	g := &wakeGate{env: e, dir: dir}
	done := make(chan result, 1)
	go func() { done <- e.binky("up", "-q", "w") }()
	waitFor(t, "web started by up", func() bool { return g.starts() == 1 })
	killDaemon(t, e)
	if r := <-done; r.code == 0 {
		t.Errorf("up whose daemon was killed: exit 0; want it failed")
	}
	g.open()
	if r := e.binky("up", "-q", "w"); r.code != 0 {
		t.Fatalf("up after the daemon's kill: %d\n%s%s\ndaemon log:\n%s", r.code, r.stdout, r.stderr, e.daemonLog())
	}
	st := namesStatus(t, e)["w"]
	if st.stable != "app" || st.urls["web"] != "http://web.app."+e.project+".localhost" && !strings.HasPrefix(st.urls["web"], "http://web.app."+e.project+".localhost:") {
		t.Errorf("w after the up: stable %q, web %q; want app, web.app."+e.project+".localhost", st.stable, st.urls["web"])
	}
	// Its health check is the gate, not its port: python may still be
	// binding it.
	waitFor(t, "web.app."+e.project+".localhost served", func() bool { code, _ := viaProxy(t, e, "web.app."+e.project+".localhost"); return code == 200 })
	if ps := g.procs(); len(ps) != 1 {
		t.Errorf("web's processes after the second up: %v; want one", ps)
	}
	e.must("up", "-q", "w2")
	if got := namesStatus(t, e)["w2"].stable; got != "app2" {
		t.Errorf("w2 holds %q; want app2", got)
	}
}

const namesRenameConfig = `
[project]
name       = "nmr"
port_range = PORTRANGE
apex       = "test"
https      = true
TEMPLATE

[agents]
expose = ["web"]

[services.web]
cmd = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url = "web"
`

// TestNamesRenameRunningWorld: a template change on a running world
// moves it to its new names at the next up: the old name is given back
// (another world may take it, the proxy no longer serves it), the new one
// routes with a certificate for it, and status and env say it.
func TestNamesRenameRunningWorld(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	cfg := func(tmpl string) string {
		return strings.Replace(namesRenameConfig, "TEMPLATE", tmpl, 1)
	}
	e := newEnv(t, cfg(""))
	e.must("up", "-q", "w")
	if code, _ := viaProxy(t, e, "web.w."+e.project+".test"); code != 200 {
		t.Fatalf("web.w."+e.project+".test before the change: %d", code)
	}
	path := e.status().world(t, "w").Path
	os.WriteFile(filepath.Join(path, "binky.toml"), []byte(e.render(cfg(`hostname = "{worktree}-{service}.x"`))), 0o644)
	up := e.must("up", "w")
	t.Logf("up after the template change:\n%s", up.stdout)
	if code, _ := viaProxy(t, e, "w-web.x.test"); code != 200 {
		t.Errorf("w-web.x.test after the change: %d; want 200", code)
	}
	if code, _ := viaProxy(t, e, "web.w."+e.project+".test"); code == 200 {
		t.Errorf("web.w.%s.test after the change: still served", e.project)
	}
	webURL := namesStatus(t, e)["w"].urls["web"]
	u, err := url.Parse(webURL)
	if err != nil || u.Hostname() != "w-web.x.test" {
		t.Fatalf("status: web %q; want https://w-web.x.test:<port>", webURL)
	}
	if env := e.must("env", "w").stdout; !strings.Contains(env, "w-web.x.test") || strings.Contains(env, "web.w."+e.project+".test") {
		t.Errorf("env after the change:\n%s", env)
	}
	leaf := tlsLeaf(t, u.Host, "w-web.x.test")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(read(filepath.Join(e.home, "certs", "ca-test", "root.crt"))))
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "w-web.x.test"}); err != nil {
		t.Errorf("the certificate for the new name: %v", err)
	}
	// The old name is free: a world of another project may take it.
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o755)
	rng := nextRange(20)
	otherCfg := fmt.Sprintf("[project]\nname = \"nmo\"\nport_range = [%d, %d]\nhostname = \"{service}.w."+e.project+"\"\napex = \"test\"\n\n[services.web]\ncmd = \"exec sleep 100902\"\nurl = \"web\"\nhealth = { exec = \"true\" }\n", rng[0], rng[1])
	if err := os.WriteFile(filepath.Join(other, "binky.toml"), []byte(otherCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e.commitNew(other)
	if r := e.binkyIn(other, "up", "-q"); r.code != 0 {
		t.Errorf("another project on w's old name web.w."+e.project+".test: exit %d, %s; want it up (the name was given back)", r.code, r.stderr)
	}
	e.binkyIn(other, "remove", "--force")
}
