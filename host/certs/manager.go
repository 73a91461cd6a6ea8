package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/hashicorp/go-hclog"
)

// DefaultLeafLifetime is how long an issued leaf certificate is valid;
// certmagic renews it at a handshake once two thirds of that have passed.
const DefaultLeafLifetime = 30 * 24 * time.Hour

// ErrNotAllowed is returned at a TLS handshake for a name the allow policy
// given to TLSConfig refuses (a name Binky does not route).
var ErrNotAllowed = errors.New("no certificate is issued for this name")

// Options configure a Manager.
type Options struct {
	// Dir holds the CA and certmagic's storage: $BINKY_HOME/certs.
	Dir string
	// Logger receives certmagic's messages (Info as Debug) and the first
	// handshake failure as a warning. Required.
	Logger hclog.Logger
	// LeafLifetime of issued certificates; DefaultLeafLifetime when zero.
	LeafLifetime time.Duration
}

// Manager issues and caches leaf certificates signed by the local CA.
type Manager struct {
	ca     *CA
	log    hclog.Logger
	cache  *certmagic.Cache
	magic  *certmagic.Config
	allow  atomic.Pointer[func(string) bool]
	warned atomic.Bool
}

// New loads (or creates) the CA under opts.Dir and prepares certmagic with
// file storage there. Call Close to stop certmagic's maintenance goroutine.
func New(opts Options) (*Manager, error) {
	if opts.Logger == nil {
		return nil, errors.New("create certificate manager: a logger is required")
	}
	if opts.Dir == "" {
		return nil, errors.New("create certificate manager: a directory is required")
	}
	if opts.LeafLifetime <= 0 {
		opts.LeafLifetime = DefaultLeafLifetime
	}
	ca, err := LoadOrCreateCA(opts.Dir)
	if err != nil {
		return nil, err
	}
	m := &Manager{ca: ca, log: opts.Logger}
	zl := newZapLogger(opts.Logger.Named("certmagic"))
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return m.magic, nil },
		Logger:           zl,
	})
	m.magic = certmagic.New(m.cache, certmagic.Config{
		Issuers:    []certmagic.Issuer{&issuer{ca: ca, lifetime: opts.LeafLifetime}},
		Storage:    &certmagic.FileStorage{Path: opts.Dir},
		Logger:     zl,
		KeySource:  certmagic.StandardKeyGenerator{KeyType: certmagic.P256},
		OCSP:       certmagic.OCSPConfig{DisableStapling: true},
		DisableARI: true,
		OnDemand: &certmagic.OnDemandConfig{
			DecisionFunc: func(_ context.Context, name string) error {
				if !ValidLocalName(name) {
					return fmt.Errorf("%q: %w", name, ErrNotLocalhost)
				}
				if allow := m.allow.Load(); allow == nil || !(*allow)(name) {
					return fmt.Errorf("%q: %w", name, ErrNotAllowed)
				}
				return nil
			},
		},
	})
	return m, nil
}

// CA returns the local certificate authority.
func (m *Manager) CA() *CA { return m.ca }

// TLSConfig returns a server configuration that obtains a certificate for a
// name at its first handshake, when allow(name) is true (the proxy passes
// "is it in the route table"). A later call replaces the policy. The first
// handshake that fails is logged as a warning; later ones at Debug.
func (m *Manager) TLSConfig(allow func(host string) bool) *tls.Config {
	m.allow.Store(&allow)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := strings.ToLower(hello.ServerName)
			cert, err := m.magic.GetCertificate(hello)
			if err != nil {
				if m.warned.CompareAndSwap(false, true) {
					m.log.Warn("tls handshake failed; http keeps working (further failures are logged at debug level)",
						"server_name", name, "error", err)
				} else {
					m.log.Debug("tls handshake failed", "server_name", name, "error", err)
				}
			}
			return cert, err
		},
	}
}

// Close stops certmagic's background maintenance.
func (m *Manager) Close() {
	m.cache.Stop()
}
