// Package certs owns Binky's local certificate authority and the TLS
// certificates the proxy serves for *.localhost names.
//
// The CA is created once under $BINKY_HOME/certs/ca (an ECDSA P-256 key kept
// 0600, name-constrained to localhost and *.localhost) and never leaves the
// machine. Leaf certificates are issued on demand, at the TLS handshake, by
// caddyserver/certmagic with file storage in $BINKY_HOME/certs and an Issuer
// that signs with that CA: no ACME, no network, no Caddy binary. Install and
// Uninstall put the CA into, and take it out of, the system and browser
// trust stores (smallstep/truststore) for `binky trust`.
package certs
