// Package redact owns secret masking for everything Binky itself writes:
// events, the daemon log, status output and error messages. A Redactor is
// told the values resolved from ${env.*} (and any other secret) with Add, and
// replaces every occurrence of them — also URL-encoded, and the password of a
// URL — with "***", in strings or in a stream whose writes may split a secret
// anywhere.
package redact
