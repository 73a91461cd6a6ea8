//go:build linux

package proxy

import (
	"encoding/json"
	"errors"
	"github.com/binkyhq/binky/internal/testbin"
	"github.com/binkyhq/binky/internal/testroot"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPagesRefuseAnotherUser is the real thing, with the real peer lookup
// (/proc/net/tcp{,6}): a copy of this test binary running as nobody (uid
// 65534) fetches the dashboard, the route list, the 404 of an unknown name
// (over 127.0.0.1 and ::1) and a down service's page, and gets the fixed
// refusals; its request to a running service is proxied as before. The
// same fetches from this process, the proxy's own user, get the pages. It
// needs root, to run the copy as another user.
func TestPagesRefuseAnotherUser(t *testing.T) {
	t.Parallel()
	testroot.Need(t, "to fetch pages as another user (uid 65534)")
	routes := ownerRoutes(t)
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "dashboard of acme") })
	p := startProxy(t, Options{Dashboard: dash})
	bare := startProxy(t, Options{})
	p.Set(routes)
	bare.Set(routes)

	type want struct {
		ownerCode int
		ownerHas  string
		otherCode int
		otherBody string // "" checks only that the other user was served
	}
	var fetches []fetch
	var wants []want
	add := func(addr, host string, w want) {
		fetches = append(fetches, fetch{Addr: addr, Host: host})
		wants = append(wants, w)
	}
	addrs := []string{p.testAddr()}
	if c, err := net.Dial("tcp", net.JoinHostPort("::1", itoa(p.Port()))); err == nil {
		c.Close()
		addrs = append(addrs, net.JoinHostPort("::1", itoa(p.Port())))
	} else {
		t.Logf("no proxy on [::1] here (%v): IPv4 only", err)
	}
	for _, addr := range addrs {
		add(addr, "binky.localhost", want{200, "dashboard of acme", 403, refusalBody})
		add(addr, "nope.main.acme.localhost", want{404, "web.main.acme.localhost", 403, refusalBody})
	}
	add(bare.testAddr(), "binky.localhost", want{200, "web.main.acme.localhost", 403, refusalBody})
	add(p.testAddr(), "api.main.acme.localhost", want{503, "binky logs main", 503, plainUnavailableBody})
	add(p.testAddr(), "web.main.acme.localhost", want{200, `"name":"web"`, 200, ""})

	spec, err := json.Marshal(fetches)
	if err != nil {
		t.Fatal(err)
	}
	out, err := nobodyCommand(t, fetchEnv+"="+string(spec)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		t.Fatalf("fetch as nobody: %v\n%s", err, out)
	}
	var other []fetchResult
	if err := json.Unmarshal(out, &other); err != nil || len(other) != len(fetches) {
		t.Fatalf("fetch as nobody printed %q (%v); want %d results", out, err, len(fetches))
	}
	owner := fetchAll(fetches)
	for i, w := range wants {
		f := fetches[i]
		if o := owner[i]; o.Err != "" || o.Status != w.ownerCode || !strings.Contains(o.Body, w.ownerHas) {
			t.Errorf("owner GET %s Host %s: %d %.200q %s; want %d with %q", f.Addr, f.Host, o.Status, o.Body, o.Err, w.ownerCode, w.ownerHas)
		}
		o := other[i]
		switch {
		case o.Err != "" || o.Status != w.otherCode:
			t.Errorf("nobody GET %s Host %s: %d %.200q %s; want %d", f.Addr, f.Host, o.Status, o.Body, o.Err, w.otherCode)
		case w.otherBody != "" && o.Body != w.otherBody:
			t.Errorf("nobody GET %s Host %s: body %q; want %q", f.Addr, f.Host, o.Body, w.otherBody)
		case w.otherBody == "" && !strings.Contains(o.Body, w.ownerHas):
			t.Errorf("nobody GET %s Host %s: body %.200q; want the service's answer, with %q", f.Addr, f.Host, o.Body, w.ownerHas)
		}
	}
}

// nobodyCommand runs a copy of this test binary as nobody (uid and gid
// 65534) with env added; its TestMain acts on env. The copy sits in a
// directory nobody can read: the test binary's own is private to root.
func nobodyCommand(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	dir, err := os.MkdirTemp("", "binky-proxy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "proxy.test")
	testbin.CopySelf(t, bin)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
