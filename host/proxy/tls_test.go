package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/certs"
)

func newCerts(t *testing.T) *certs.Manager {
	t.Helper()
	m, err := certs.New(certs.Options{Dir: filepath.Join(t.TempDir(), "certs"), Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("certificate manager: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func tlsClient(roots *x509.CertPool, proxyAddr string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Proxy: nil,
		// Every name goes to the proxy, as *.localhost resolves to it.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, proxyAddr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
	}}
}

func TestHTTPSWithLocalCA(t *testing.T) {
	// Not parallel: certmagic waits for an on-demand certificate by its
	// name across every manager of the process, so two tests asking for
	// binky.localhost at once could be handed each other's (another CA's)
	// certificate. A daemon has one manager.
	addr, _ := startBackend(t, "tls")
	m := newCerts(t)
	p := startProxy(t, Options{Certs: m, TLSAddr: "127.0.0.1:0", TLSFallbackAddr: fallbackNone})
	host := "web.feat-a.acme.localhost"
	p.Upsert(Route{Host: host, Target: addr, State: StateRunning, Project: "acme", Worktree: "feat-a", Service: "web"})
	if p.TLSPort() == 0 {
		t.Fatal("TLSPort: got 0; want the https port")
	}
	proxyAddr := "127.0.0.1:" + itoa(p.TLSPort())
	url := p.SecureURL(host) + "/secure"

	resp, err := tlsClient(m.CA().Pool(), proxyAddr).Get(url)
	if err != nil {
		t.Fatalf("GET %s with the local CA as the only root: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d %s", url, resp.StatusCode, body)
	}
	e := decodeEcho(t, string(body))
	if e.Name != "tls" || e.Headers["X-Forwarded-Proto"] != "https" {
		t.Errorf("backend saw name %q proto %q; want tls, https", e.Name, e.Headers["X-Forwarded-Proto"])
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol: got %s; want HTTP/2 over TLS", resp.Proto)
	}

	// Without the local CA among the roots the handshake must fail.
	_, err = tlsClient(x509.NewCertPool(), proxyAddr).Get(url)
	var unk x509.UnknownAuthorityError
	if !errors.As(err, &unk) {
		t.Errorf("GET without the local CA: got %v; want an unknown-authority error", err)
	}
	// A name that is not routed gets no certificate.
	if _, err := tlsClient(m.CA().Pool(), proxyAddr).Get(p.SecureURL("nope.feat-a.acme.localhost")); err == nil {
		t.Error("GET an unrouted name over https: got success; want a failed handshake")
	}
	// The dashboard host has a certificate too.
	resp, err = tlsClient(m.CA().Pool(), proxyAddr).Get(p.SecureURL("binky.localhost"))
	if err != nil {
		t.Fatalf("GET dashboard over https: %v", err)
	}
	resp.Body.Close()
}

// When https cannot listen, Start still succeeds and http keeps working.
func TestHTTPSDegradesToHTTP(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr, _ := startBackend(t, "plain")
	p := startProxy(t, Options{Certs: newCerts(t), TLSAddr: busy.Addr().String(), TLSFallbackAddr: fallbackNone})
	p.Upsert(Route{Host: "web.a.b.localhost", Target: addr, State: StateRunning, Project: "b", Worktree: "a", Service: "web"})
	if got := p.SecureURL("web.a.b.localhost"); got != "" {
		t.Errorf("SecureURL with https down: got %q; want empty", got)
	}
	if resp, body := get(t, p, "web.a.b.localhost", "/"); resp.StatusCode != http.StatusOK || decodeEcho(t, body).Name != "plain" {
		t.Fatalf("http with https down: got %d %q; want 200 from the backend", resp.StatusCode, body)
	}
}

// A remote route (another host's world, reached through a forward) is
// served over https too, with a certificate of the local CA: the road to
// the host is the proxy's business, not the browser's.
func TestHTTPSRemoteRoute(t *testing.T) {
	addr, _ := startBackend(t, "far")
	m := newCerts(t)
	p := startProxy(t, Options{Certs: m, TLSAddr: "127.0.0.1:0", TLSFallbackAddr: fallbackNone})
	host := "web.feat.far.localhost"
	p.Set([]Route{{Host: host, Target: addr, State: StateRunning, Project: "far", Worktree: "feat", Service: "web", Remote: "box"}})
	url := p.SecureURL(host) + "/"
	resp, err := tlsClient(m.CA().Pool(), "127.0.0.1:"+itoa(p.TLSPort())).Get(url)
	if err != nil {
		t.Fatalf("GET %s with the local CA as the only root: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d %s", url, resp.StatusCode, body)
	}
	if e := decodeEcho(t, string(body)); e.Name != "far" || e.Headers["X-Forwarded-Proto"] != "https" {
		t.Errorf("backend saw name %q proto %q; want far, https", e.Name, e.Headers["X-Forwarded-Proto"])
	}
}
