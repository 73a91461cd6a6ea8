package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"

	"github.com/binkyhq/binky/sdk/names"
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

// Manager issues and caches leaf certificates signed by the local CAs: one
// per private zone (localhost's made at New, another's at the first
// handshake for a name in it).
type Manager struct {
	ca       *CA
	log      hclog.Logger
	dir      string
	lifetime time.Duration
	zl       *zap.Logger
	cache    *certmagic.Cache
	magic    *certmagic.Config // localhost's
	zonesMu  sync.Mutex
	zones    map[string]*certmagic.Config // every zone's, localhost's included
	allow    atomic.Pointer[func(string) bool]
	warned   atomic.Bool
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
	m := &Manager{ca: ca, log: opts.Logger, dir: opts.Dir, lifetime: opts.LeafLifetime, zones: map[string]*certmagic.Config{}}
	m.zl = newZapLogger(opts.Logger.Named("certmagic"))
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(c certmagic.Certificate) (*certmagic.Config, error) {
			for _, n := range c.Names {
				if z, ok := names.PrivateZone(n); ok {
					if cfg, err := m.zoneConfig(z); err == nil {
						return cfg, nil
					}
				}
			}
			return m.magic, nil
		},
		Logger: m.zl,
	})
	m.magic = m.newConfig(ca)
	m.zones["localhost"] = m.magic
	return m, nil
}

// newConfig is certmagic's configuration for the names ca signs.
func (m *Manager) newConfig(ca *CA) *certmagic.Config {
	return certmagic.New(m.cache, certmagic.Config{
		Issuers:    []certmagic.Issuer{&issuer{ca: ca, lifetime: m.lifetime}},
		Storage:    &certmagic.FileStorage{Path: m.dir},
		Logger:     m.zl,
		KeySource:  certmagic.StandardKeyGenerator{KeyType: certmagic.P256},
		OCSP:       certmagic.OCSPConfig{DisableStapling: true},
		DisableARI: true,
		OnDemand: &certmagic.OnDemandConfig{
			DecisionFunc: func(_ context.Context, name string) error {
				if !ca.Covers(name) {
					return fmt.Errorf("%q: %w", name, ErrNotLocalhost)
				}
				if allow := m.allow.Load(); allow == nil || !(*allow)(name) {
					return fmt.Errorf("%q: %w", name, ErrNotAllowed)
				}
				return nil
			},
		},
	})
}

// zoneConfig is the configuration of a private zone, its CA loaded or made
// on first use.
func (m *Manager) zoneConfig(zone string) (*certmagic.Config, error) {
	m.zonesMu.Lock()
	defer m.zonesMu.Unlock()
	if cfg := m.zones[zone]; cfg != nil {
		return cfg, nil
	}
	ca, err := LoadOrCreateZoneCA(m.dir, zone)
	if err != nil {
		return nil, err
	}
	cfg := m.newConfig(ca)
	m.zones[zone] = cfg
	m.log.Info("local CA for a new zone: run binky trust so browsers accept its names", "zone", zone, "ca", ca.CertPath)
	return cfg, nil
}

// CAFor returns the local CA that signs name (made on first use), or an
// error wrapping ErrNotLocalhost for a name in no private zone.
func (m *Manager) CAFor(name string) (*CA, error) {
	z, ok := names.PrivateZone(name)
	if !ok {
		return nil, fmt.Errorf("%q: %w", name, ErrNotLocalhost)
	}
	if z == "localhost" {
		return m.ca, nil
	}
	if _, err := m.zoneConfig(z); err != nil {
		return nil, err
	}
	return LoadZoneCA(m.dir, z)
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
			cfg := m.magic
			if z, ok := names.PrivateZone(name); ok && z != "localhost" {
				var err error
				if cfg, err = m.zoneConfig(z); err != nil {
					m.log.Warn("tls handshake failed: no local CA for the name's zone", "server_name", name, "error", err)
					return nil, err
				}
			}
			cert, err := cfg.GetCertificate(hello)
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
