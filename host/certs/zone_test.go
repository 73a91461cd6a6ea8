package certs

import (
	"crypto/x509"
	"errors"
	"path/filepath"
	"testing"
)

// TestZoneCA: a routed name under another private zone gets a leaf from a
// CA of that zone alone, made at the first handshake beside localhost's
// (which is left as it was); the localhost CA does not vouch for it, the
// zone's CA vouches for nothing outside the zone, and no CA is made for a
// public zone.
func TestZoneCA(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "certs")
	m := newManager(t, dir)
	root := m.CA().Cert
	const name = "web.app2.zonetest.test"
	addr := serveTLS(t, m, func(h string) bool { return h == name || h == "web.x.example.com" })

	ca, err := m.CAFor(name)
	if err != nil {
		t.Fatalf("CAFor(%s): %v", name, err)
	}
	if ca.Zone() != "test" || ca.CertPath != filepath.Join(dir, "ca-test", "root.crt") {
		t.Errorf("the zone's CA: zone %q at %s; want test at ca-test/root.crt", ca.Zone(), ca.CertPath)
	}
	leaf, err := handshake(addr, name, ca.Pool())
	if err != nil {
		t.Fatalf("handshake for %s with the test CA as root: %v", name, err)
	}
	if got := leaf.DNSNames; len(got) != 1 || got[0] != name {
		t.Errorf("leaf names %v; want [%s]", got, name)
	}
	var unk x509.UnknownAuthorityError
	if _, err := handshake(addr, name, m.CA().Pool()); !errors.As(err, &unk) {
		t.Errorf("the localhost CA as only root: %v; want unknown authority", err)
	}
	if !m.CA().Cert.Equal(root) {
		t.Error("the localhost CA changed")
	}
	if _, err := handshake(addr, "web.x.example.com", ca.Pool()); err == nil {
		t.Error("a routed name in a public zone got a certificate")
	}
	if _, err := m.CAFor("web.x.example.com"); !errors.Is(err, ErrNotLocalhost) {
		t.Errorf("CAFor of a public name: %v; want ErrNotLocalhost", err)
	}
	if _, err := LoadOrCreateZoneCA(dir, "com"); !errors.Is(err, ErrNotLocalhost) {
		t.Errorf("a CA for com: %v; want refused", err)
	}
	// The zone CA is name-constrained: a leaf it signed for another zone
	// would not verify.
	if ca.Cert.PermittedDNSDomains[0] != "test" || !ca.Cert.PermittedDNSDomainsCritical {
		t.Errorf("zone CA constraints %v (critical %v); want [test], critical", ca.Cert.PermittedDNSDomains, ca.Cert.PermittedDNSDomainsCritical)
	}
	if !ValidZoneName(name, "test") || ValidZoneName("test", "test") || ValidZoneName("a..test", "test") || ValidZoneName("a.localhost", "test") {
		t.Error("ValidZoneName disagrees")
	}
}
