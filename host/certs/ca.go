package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/sdk/names"
)

// Files of the CA inside its directory.
const (
	caDirName  = "ca"
	caCertFile = "root.crt"
	caKeyFile  = "root.key"
)

// caLifetime is how long the local root is valid. It is long because
// re-trusting a new root is a manual step for the developer.
const caLifetime = 10 * 365 * 24 * time.Hour

// ErrNotLocalhost is returned when a certificate is asked for a name outside
// localhost, *.localhost and the other private zones (names.PrivateZones);
// the local CAs sign nothing else.
var ErrNotLocalhost = errors.New("name is not under localhost nor another private zone (test, example, internal, home.arpa)")

// CA is Binky's local certificate authority.
type CA struct {
	// Cert is the self-signed root certificate.
	Cert *x509.Certificate
	// CertPEM is Cert PEM-encoded, as written to CertPath.
	CertPEM []byte
	// CertPath is the root certificate's file, for trust stores and for
	// clients given a CA file (curl --cacert, NODE_EXTRA_CA_CERTS).
	CertPath string

	key *ecdsa.PrivateKey
}

// LoadOrCreateCA loads the CA kept under dir/ca, creating it first when it
// does not exist. Creation is atomic: the files are written into a temporary
// directory that is renamed into place, so two processes racing to create it
// end up sharing whichever got there first.
func LoadOrCreateCA(dir string) (*CA, error) {
	return LoadOrCreateZoneCA(dir, "localhost")
}

// LoadOrCreateZoneCA is LoadOrCreateCA for the CA of one private zone
// (names.PrivateZones): localhost's lives in dir/ca, any other's in
// dir/ca-<zone>, name-constrained to that zone alone. Each zone has a CA of
// its own so that using a new apex never replaces a root the machine
// already trusts: `binky trust` adds the new one.
func LoadOrCreateZoneCA(dir, zone string) (*CA, error) {
	if _, ok := names.PrivateZone(zone); !ok || strings.Contains(zone, "/") {
		return nil, fmt.Errorf("make a local CA for %q: %w", zone, ErrNotLocalhost)
	}
	caDir := filepath.Join(dir, zoneDir(zone))
	ca, err := loadCA(caDir)
	if err == nil {
		return ca, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create certificate directory %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, ".ca-")
	if err != nil {
		return nil, fmt.Errorf("create local CA in %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := writeNewCA(tmp, zone); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, caDir); err != nil {
		// Another process created it meanwhile: use theirs.
		ca, lerr := loadCA(caDir)
		if lerr == nil {
			return ca, nil
		}
		if !errors.Is(lerr, os.ErrNotExist) {
			return nil, lerr
		}
		return nil, fmt.Errorf("install local CA at %s: %w", caDir, err)
	}
	return loadCA(caDir)
}

// LoadCA loads the CA kept under dir/ca without creating it; the error wraps
// os.ErrNotExist when there is none.
func LoadCA(dir string) (*CA, error) {
	return loadCA(filepath.Join(dir, caDirName))
}

// zoneDir is the directory, under the certificates' directory, of the CA
// of zone.
func zoneDir(zone string) string {
	if zone == "localhost" {
		return caDirName
	}
	return caDirName + "-" + zone
}

// LoadZoneCA is LoadCA for the CA of zone (LoadOrCreateZoneCA).
func LoadZoneCA(dir, zone string) (*CA, error) {
	return loadCA(filepath.Join(dir, zoneDir(zone)))
}

// writeNewCA generates a root key and certificate into dir, for names in
// zone only.
func writeNewCA(dir, zone string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate local CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	name := "Binky Local CA"
	if zone != "localhost" {
		name += " for ." + zone
	}
	if host != "" {
		name += " (" + host + ")"
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Binky development CA"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
		// The root can only ever vouch for local names, so trusting it
		// does not let anyone holding its key impersonate a real site.
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         []string{zone},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("sign local CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode local CA key: %w", err)
	}
	keyPath := filepath.Join(dir, caKeyFile)
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("write local CA key %s: %w", keyPath, err)
	}
	certPath := filepath.Join(dir, caCertFile)
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("write local CA certificate %s: %w", certPath, err)
	}
	return nil
}

// loadCA reads the root certificate and key from dir. A directory with
// neither file reports os.ErrNotExist; one with only one of them is damaged.
func loadCA(dir string) (*CA, error) {
	certPath := filepath.Join(dir, caCertFile)
	keyPath := filepath.Join(dir, caKeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	if errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist) {
		return nil, fmt.Errorf("load local CA from %s: %w", dir, os.ErrNotExist)
	}
	if cerr != nil || kerr != nil {
		return nil, fmt.Errorf("load local CA from %s: %v (remove the directory to create a new CA, then run `binky trust` again)", dir, errors.Join(cerr, kerr))
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("load local CA certificate %s: %w", certPath, err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("load local CA key %s: no PEM block", keyPath)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("load local CA key %s: %w", keyPath, err)
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("load local CA from %s: key does not match certificate (remove the directory to create a new CA)", dir)
	}
	return &CA{Cert: cert, CertPEM: certPEM, CertPath: certPath, key: key}, nil
}

// Pool returns a certificate pool holding only this CA, for clients that
// should trust Binky's certificates and nothing else.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// SignCSR issues a server certificate for the names in csr, valid from an hour
// ago for lifetime (never past the CA's own expiry), and returns it
// PEM-encoded. Every name must be localhost or end in .localhost.
func (ca *CA) SignCSR(csr *x509.CertificateRequest, lifetime time.Duration) ([]byte, error) {
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("check certificate request signature: %w", err)
	}
	names := csr.DNSNames
	if len(names) == 0 && csr.Subject.CommonName != "" {
		names = []string{csr.Subject.CommonName}
	}
	if len(names) == 0 {
		return nil, errors.New("sign certificate request: no names in it")
	}
	if len(csr.IPAddresses)+len(csr.EmailAddresses)+len(csr.URIs) > 0 {
		return nil, fmt.Errorf("sign certificate request for %v: only DNS names are allowed", names)
	}
	for _, n := range names {
		if !ca.Covers(n) {
			return nil, fmt.Errorf("sign certificate for %q: %w", n, ErrNotLocalhost)
		}
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notAfter := now.Add(lifetime)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: names[0]},
		DNSNames:              names,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if _, isRSA := csr.PublicKey.(*rsa.PublicKey); isRSA {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, csr.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %v: %w", names, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// Zone is the one zone this CA signs names in (its permitted DNS domain).
func (ca *CA) Zone() string {
	if len(ca.Cert.PermittedDNSDomains) == 1 {
		return ca.Cert.PermittedDNSDomains[0]
	}
	return "localhost"
}

// Covers reports whether the CA signs name: a valid DNS name in its zone.
func (ca *CA) Covers(name string) bool {
	z := ca.Zone()
	if z == "localhost" {
		return ValidLocalName(name)
	}
	return ValidZoneName(name, z)
}

// ValidZoneName reports whether name is a syntactically valid DNS name
// under zone (not zone itself): ValidLocalName's rules with zone in place
// of localhost.
func ValidZoneName(name, zone string) bool {
	if !strings.HasSuffix(name, "."+zone) {
		return false
	}
	return ValidLocalName(strings.TrimSuffix(name, zone) + "localhost")
}

// ValidLocalName reports whether name is "localhost" or a syntactically valid
// DNS name under .localhost (lowercase letters, digits and hyphens).
func ValidLocalName(name string) bool {
	if name == "localhost" {
		return true
	}
	const suffix = ".localhost"
	if len(name) <= len(suffix) || len(name) > 253 || name[len(name)-len(suffix):] != suffix {
		return false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 || name[i-1] == '-' {
				return false
			}
			label = 0
			continue
		case c == '-':
			if label == 0 {
				return false
			}
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			return false
		}
		label++
		if label > 63 {
			return false
		}
	}
	return true
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no CERTIFICATE PEM block")
	}
	return x509.ParseCertificate(block.Bytes)
}

func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate certificate serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// ZoneCAs returns the CAs of the private zones other than localhost that
// exist under dir (made when a project's apex first got a certificate), in
// zone order. A directory that cannot be read is skipped.
func ZoneCAs(dir string) []*CA {
	var out []*CA
	for _, z := range names.PrivateZones {
		if z == "localhost" {
			continue
		}
		if ca, err := LoadZoneCA(dir, z); err == nil {
			out = append(out, ca)
		}
	}
	return out
}
