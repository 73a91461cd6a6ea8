// Package certs owns Binky's local certificate authorities and the TLS
// certificates the proxy serves for *.localhost names and for names under
// a project's other apex in a private zone (test, example, internal,
// home.arpa).
//
// The localhost CA is created once under $BINKY_HOME/certs/ca (an ECDSA
// P-256 key kept 0600, name-constrained to localhost and *.localhost) and
// never leaves the machine. Each other private zone gets a root of its own
// in $BINKY_HOME/certs/ca-<zone>, name-constrained to that zone, made at
// the first handshake for one of its names (or by `binky trust --zone`):
// a new apex never replaces a root already trusted, and no root covers a
// public zone. Leaf certificates are issued on demand, at the TLS
// handshake, by caddyserver/certmagic with file storage in
// $BINKY_HOME/certs and an Issuer per zone that signs with its CA: no
// ACME, no network, no Caddy binary. Install and Uninstall put a CA into,
// and take it out of, the system and browser trust stores
// (smallstep/truststore) for `binky trust`.
package certs
