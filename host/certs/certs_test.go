package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/internal/testlog"
)

func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: testlog.Writer(t)})
}

func TestCAIsCreatedOnceWithPrivateKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "certs")
	ca1, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatalf("create CA: %v", err)
	}
	ca2, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatalf("load CA: %v", err)
	}
	if !ca1.Cert.Equal(ca2.Cert) {
		t.Fatal("second LoadOrCreateCA made a new CA; want the same one")
	}
	fi, err := os.Stat(filepath.Join(dir, caDirName, caKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); runtime.GOOS != "windows" && got != 0o600 { // Windows: ACLs, not modes
		t.Errorf("CA key mode: got %v; want 0600", got)
	}
	if _, ok := ca1.Cert.PublicKey.(*ecdsa.PublicKey); !ok || ca1.key.Curve != elliptic.P256() {
		t.Errorf("CA key: want ECDSA P-256")
	}
	if !ca1.Cert.IsCA || ca1.CertPath != filepath.Join(dir, caDirName, caCertFile) {
		t.Errorf("CA cert: IsCA %v path %s", ca1.Cert.IsCA, ca1.CertPath)
	}

	// A damaged CA directory (key gone) is an error naming the fix, not a
	// silent new CA that the trust store would not know.
	if err := os.Remove(filepath.Join(dir, caDirName, caKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateCA(dir); err == nil || !strings.Contains(err.Error(), "binky trust") {
		t.Fatalf("load CA without key: got %v; want an error telling what to do", err)
	}
}

func csrFor(t *testing.T, names ...string) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: names}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}

func TestSignCSROnlyLocalNames(t *testing.T) {
	t.Parallel()
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		names []string
		ok    bool
	}{
		{[]string{"web.feat-a.acme.localhost"}, true},
		{[]string{"localhost", "binky.localhost"}, true},
		{[]string{"example.com"}, false},
		{[]string{"web.localhost", "evil.com"}, false},
		{[]string{"localhost.evil.com"}, false},
		{[]string{"*.acme.localhost"}, false},
	} {
		pemBytes, err := ca.SignCSR(csrFor(t, tc.names...), time.Hour)
		if (err == nil) != tc.ok {
			t.Errorf("SignCSR(%v): got err %v; want ok=%v", tc.names, err, tc.ok)
			continue
		}
		if !tc.ok {
			if !errors.Is(err, ErrNotLocalhost) {
				t.Errorf("SignCSR(%v): got %v; want ErrNotLocalhost", tc.names, err)
			}
			continue
		}
		leaf, err := parseCertPEM(pemBytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tc.names {
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: n, Roots: ca.Pool()}); err != nil {
				t.Errorf("verify leaf for %s against the local CA: %v", n, err)
			}
		}
	}
}

// The root is name-constrained: even a certificate its key signs for a real
// domain does not verify. Trusting the CA cannot expose other sites.
func TestCANameConstraintRefusesOtherDomains(t *testing.T) {
	t.Parallel()
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "bank.example"},
		DNSNames: []string{"bank.example"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: "bank.example", Roots: ca.Pool()})
	var cie x509.CertificateInvalidError
	if !errors.As(err, &cie) || cie.Reason != x509.CANotAuthorizedForThisName {
		t.Fatalf("verify bank.example signed by the local CA: got %v; want CANotAuthorizedForThisName", err)
	}
}

func TestValidLocalName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"localhost", true},
		{"binky.localhost", true},
		{"web.feat-a-3f2a.acme.localhost", true},
		{".localhost", false},
		{"a..localhost", false},
		{"-a.localhost", false},
		{"a-.localhost", false},
		{"A.localhost", false},
		{"a_b.localhost", false},
		{"a.localhost.", false},
		{"xlocalhost", false},
		{strings.Repeat("a", 64) + ".localhost", false},
		{strings.Repeat("a", 63) + ".localhost", true},
	} {
		if got := ValidLocalName(tc.in); got != tc.want {
			t.Errorf("ValidLocalName(%q): got %v; want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzValidLocalName: SNI names come from any client. Whatever is accepted
// must be a DNS name under localhost that x509 will put in a certificate.
func FuzzValidLocalName(f *testing.F) {
	for _, s := range []string{"localhost", "web.a.b.localhost", "a..localhost", "A.localhost", "x.localhost."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !ValidLocalName(name) {
			return
		}
		if name != "localhost" && !strings.HasSuffix(name, ".localhost") {
			t.Fatalf("accepted %q outside localhost", name)
		}
		if strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.ToLower(name) != name {
			t.Fatalf("accepted malformed %q", name)
		}
		if net.ParseIP(name) != nil {
			t.Fatalf("accepted an IP %q", name)
		}
	})
}

func newManager(t *testing.T, dir string) *Manager {
	t.Helper()
	m, err := New(Options{Dir: dir, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// serveTLS accepts handshakes on a loopback listener with m's config.
func serveTLS(t *testing.T, m *Manager, allow func(string) bool) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", m.TLSConfig(allow))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}()
		}
	}()
	return ln.Addr().String()
}

func handshake(addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

func TestOnDemandHandshake(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "certs")
	m := newManager(t, dir)
	allowed := map[string]bool{"web.feat-a.acme.localhost": true}
	addr := serveTLS(t, m, func(h string) bool { return allowed[h] })

	leaf, err := handshake(addr, "web.feat-a.acme.localhost", m.CA().Pool())
	if err != nil {
		t.Fatalf("handshake with the local CA as only root: %v", err)
	}
	if got := leaf.DNSNames; len(got) != 1 || got[0] != "web.feat-a.acme.localhost" {
		t.Errorf("leaf names: got %v; want [web.feat-a.acme.localhost]", got)
	}

	// An empty pool: the local CA is not trusted, the handshake must fail.
	var unk x509.UnknownAuthorityError
	if _, err := handshake(addr, "web.feat-a.acme.localhost", x509.NewCertPool()); !errors.As(err, &unk) {
		t.Errorf("handshake without the CA: got %v; want unknown authority", err)
	}
	// A name that is not routed gets no certificate at all.
	if _, err := handshake(addr, "other.feat-a.acme.localhost", m.CA().Pool()); err == nil {
		t.Error("handshake for an unrouted name: got success; want failure")
	}

	// Certificates live in certmagic's file storage under dir and a new
	// manager (a daemon restart) serves the same one without reissuing.
	matches, _ := filepath.Glob(filepath.Join(dir, "certificates", "*", "web.feat-a.acme.localhost", "*.crt"))
	if len(matches) != 1 {
		t.Fatalf("stored certificate: got %v; want one file", matches)
	}
	m2 := newManager(t, dir)
	addr2 := serveTLS(t, m2, func(h string) bool { return allowed[h] })
	leaf2, err := handshake(addr2, "web.feat-a.acme.localhost", m2.CA().Pool())
	if err != nil {
		t.Fatalf("handshake after restart: %v", err)
	}
	if !leaf2.Equal(leaf) {
		t.Error("after restart: a new leaf was issued; want the stored one")
	}
}
