//go:build linux

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Names (issue 43): a hostname template under apex test, a service's own
// host, stable names handed out and given back, a name another world
// holds refused naming it, and https certificates for those names from
// the zone's own CA.

const namesWorldConfig = `
[project]
name         = "nmx"
port_range   = PORTRANGE
hostname     = "{service}.{worktree}.{project}"
apex         = "test"
https        = true
stable_names = ["app", "app2"]

[agents]
expose = ["web", "api"]

[services.web]
cmd = "exec python3 -m http.server ${self.port} --bind 127.0.0.1 --directory WEBDIR"
url = "web"

[services.api]
cmd  = "exec python3 -m http.server ${self.port} --bind 127.0.0.1"
url  = "api"
host = "{service}-{worktree}.{project}"
`

// namesStatus is what status --json says of each world: its stable name
// and each service's URL.
func namesStatus(t *testing.T, e *env) map[string]struct {
	stable string
	urls   map[string]string
} {
	t.Helper()
	var s struct {
		Worlds []struct {
			Worktree   string `json:"worktree"`
			StableName string `json:"stable_name"`
			Services   []struct {
				Name string `json:"name"`
				URL  string `json:"url"`
			} `json:"services"`
		} `json:"worlds"`
	}
	out := e.must("status", "--json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	res := map[string]struct {
		stable string
		urls   map[string]string
	}{}
	for _, w := range s.Worlds {
		urls := map[string]string{}
		for _, sv := range w.Services {
			urls[sv.Name] = sv.URL
		}
		res[w.Worktree] = struct {
			stable string
			urls   map[string]string
		}{w.StableName, urls}
	}
	return res
}

// viaProxy asks the proxy's http listener for / with Host host.
func viaProxy(t *testing.T, e *env, host string) (int, string) {
	t.Helper()
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(e.must("daemon", "status", "--json").stdout), &ds)
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
	req.Host = host
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET via the proxy with Host %s: %v", host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNamesCLI(t *testing.T) {
	needCommand(t, "python3", "apt-get install python3")
	web := t.TempDir()
	if err := os.WriteFile(filepath.Join(web, "index.html"), []byte("names page"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, strings.Replace(namesWorldConfig, "WEBDIR", web, 1))

	// The first world is handed app: web under the template and apex,
	// api under its own host.
	e.must("up", "-q", "w1")
	st := namesStatus(t, e)
	if st["w1"].stable != "app" {
		t.Fatalf("w1's stable name %q; want app", st["w1"].stable)
	}
	webURL, apiURL := st["w1"].urls["web"], st["w1"].urls["api"]
	u, err := url.Parse(webURL)
	if err != nil || u.Scheme != "https" || u.Hostname() != "web.app."+e.project+".test" {
		t.Fatalf("w1's web URL %q; want https://web.app."+e.project+".test:<port>", webURL)
	}
	if a, _ := url.Parse(apiURL); a == nil || a.Hostname() != "api-app."+e.project+".test" {
		t.Errorf("w1's api URL %q; want its host override api-app."+e.project+".test", apiURL)
	}
	if code, body := viaProxy(t, e, "web.app."+e.project+".test"); code != http.StatusOK || !strings.Contains(body, "names page") {
		t.Errorf("web.app."+e.project+".test through the proxy: %d %q; want w1's page", code, body)
	}
	if code, _ := viaProxy(t, e, "api-app."+e.project+".test"); code != http.StatusOK {
		t.Errorf("api-app."+e.project+".test through the proxy: %d; want 200", code)
	}
	if code, _ := viaProxy(t, e, "web.nothing."+e.project+".test"); code != http.StatusMisdirectedRequest {
		t.Errorf("an unrouted .test name: %d; want 421", code)
	}

	// https: the certificate for the .test name is the .test CA's, and
	// verifies for that name against it alone.
	leaf := tlsLeaf(t, u.Host, "web.app."+e.project+".test")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(read(filepath.Join(e.home, "certs", "ca-test", "root.crt")))) {
		t.Fatal("no CA for .test under the home's certs")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "web.app." + e.project + ".test", Roots: pool}); err != nil {
		t.Errorf("the leaf for web.app."+e.project+".test does not verify against the .test CA: %v", err)
	}
	local := x509.NewCertPool()
	local.AppendCertsFromPEM([]byte(read(filepath.Join(e.home, "certs", "ca", "root.crt"))))
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "web.app." + e.project + ".test", Roots: local}); err == nil {
		t.Error("the localhost CA vouches for a .test name")
	}

	// The second world gets app2; status and env say so.
	e.must("up", "-q", "w2")
	if got := namesStatus(t, e)["w2"].stable; got != "app2" {
		t.Errorf("w2's stable name %q; want app2", got)
	}
	if out := e.must("status").stdout; !strings.Contains(out, "stable name: app2") {
		t.Errorf("status does not show w2's stable name:\n%s", out)
	}
	env := e.must("env", "w2")
	if !strings.Contains(env.stdout, "https://web.app2."+e.project+".test") || !strings.Contains(env.stderr, "holds the stable name app2") {
		t.Errorf("env w2: stdout %s stderr %s; want web.app2 and the stable name", env.stdout, env.stderr)
	}
	if dot := e.must("env", "--dotenv", "w2").stdout; !strings.Contains(dot, "BINKY_STABLE_NAME='app2'") {
		t.Errorf("env --dotenv w2 lacks BINKY_STABLE_NAME:\n%s", dot)
	}

	// A third finds the set taken: refused naming both holders.
	r := e.binky("up", "-q", "w3")
	if r.code == 0 || !strings.Contains(r.stderr, "app by world "+e.project+"/w1") || !strings.Contains(r.stderr, "app2 by world "+e.project+"/w2") {
		t.Fatalf("up w3 with every stable name held: exit %d, stderr %q; want refused naming "+e.project+"/w1 and "+e.project+"/w2", r.code, r.stderr)
	}

	// Remove w1: its name goes to w3, whose page answers there.
	e.must("remove", "--force", "w1")
	e.must("up", "-q", "w3")
	if got := namesStatus(t, e)["w3"].stable; got != "app" {
		t.Errorf("w3 after w1's remove holds %q; want app", got)
	}
	if code, _ := viaProxy(t, e, "web.app."+e.project+".test"); code != http.StatusOK {
		t.Errorf("web.app."+e.project+".test after the hand-over: %d; want w3's 200", code)
	}

	// Another project of this home whose template lands on w3's name is
	// refused at up, naming w3.
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o755)
	rng := nextRange(20)
	otherCfg := fmt.Sprintf("[project]\nname = \"nmy\"\nport_range = [%d, %d]\nhostname = \"{service}.app."+e.project+"\"\napex = \"test\"\n\n[services.web]\ncmd = \"exec sleep 100901\"\nurl = \"web\"\nhealth = { exec = \"true\" }\n", rng[0], rng[1])
	if err := os.WriteFile(filepath.Join(other, "binky.toml"), []byte(otherCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e.commitNew(other)
	r = e.binkyIn(other, "up", "-q")
	if r.code == 0 || !strings.Contains(r.stderr, "web.app."+e.project+".test by world "+e.project+"/w3") {
		t.Errorf("up of another project on w3's name: exit %d, stderr %q; want refused naming "+e.project+"/w3", r.code, r.stderr)
	}
	e.binkyIn(other, "remove", "--force")
}

// tlsLeaf does a TLS handshake with the proxy's https listener at
// hostport for serverName and returns the leaf it served (verified by the
// caller against the CA it means).
func tlsLeaf(t *testing.T, hostport, serverName string) *x509.Certificate {
	t.Helper()
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("https URL host %q has no port: %v", hostport, err)
	}
	d := &net.Dialer{Timeout: time.Minute}
	c, err := tls.DialWithDialer(d, "tcp", "127.0.0.1:"+port, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("TLS handshake for %s: %v", serverName, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}
