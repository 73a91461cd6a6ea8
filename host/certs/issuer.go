package certs

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"time"

	"github.com/caddyserver/certmagic"
)

// issuer is a certmagic.Issuer that signs with the local CA, in process.
type issuer struct {
	ca       *CA
	lifetime time.Duration
}

// Issue signs request with the local CA.
func (i *issuer) Issue(_ context.Context, request *x509.CertificateRequest) (*certmagic.IssuedCertificate, error) {
	pemBytes, err := i.ca.SignCSR(request, i.lifetime)
	if err != nil {
		return nil, err
	}
	return &certmagic.IssuedCertificate{Certificate: pemBytes}, nil
}

// IssuerKey names this CA in certmagic's storage, so certificates signed by
// an earlier CA (one that was deleted and recreated) are never served.
func (i *issuer) IssuerKey() string {
	sum := sha256.Sum256(i.ca.Cert.Raw)
	return "binky-local-" + hex.EncodeToString(sum[:6])
}

var _ certmagic.Issuer = (*issuer)(nil)
