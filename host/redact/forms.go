package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// form is one spelling a Redactor looks for.
type form struct {
	s string
	// edge marks the raw text of a line of a multi-line secret (see
	// fragments): where a text begins or ends inside it, the part of it
	// the text holds is masked too when it is MinLen bytes or more.
	edge bool
	// lit is the index of the first '%' or '\' in s (len(s) if none):
	// before it, a byte of s in the text as it is can only stand for
	// itself. Set by newMatcher.
	lit int
}

// Forms lists the spellings of a secret a Redactor looks for, each of
// MinLen bytes or more: the value itself; hex, lower and upper case;
// base64 in the standard and URL alphabets, with and without padding;
// and, for each alphabet, the base64 characters that depend on the secret
// alone when it sits inside a longer base64 text at each of the three byte
// alignments (the characters at either edge also carry neighbouring bits,
// so they are not part of the form). For a multi-line secret, the same
// spellings of each of its lines that counts as a fragment follow (see the
// package documentation), but for the base64 of a line alone.
//
// Escaped spellings are not listed: the matcher reads percent-encoding and
// JSON string escapes in the text as the bytes they stand for, so every
// form is also found URL-encoded (by any encoder, hex digits in either
// case) and inside a JSON string.
func Forms(secret string) []string {
	fs := formsOf(secret)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.s
	}
	return out
}

// formsOf is Forms with each form's edge flag; nil for a secret shorter
// than MinLen.
func formsOf(secret string) []form {
	if len(secret) < MinLen {
		return nil
	}
	var out []form
	seen := map[string]int{}
	add := func(s string, edge bool) {
		if len(s) < MinLen {
			return
		}
		if i, ok := seen[s]; ok {
			out[i].edge = out[i].edge || edge
			return
		}
		seen[s] = len(out)
		out = append(out, form{s: s, edge: edge})
	}
	for _, s := range spellings(secret, true) {
		add(s, false)
	}
	for _, line := range fragments(secret) {
		for i, s := range spellings(line, false) {
			add(s, i == 0) // only the raw line is matched in part at edges
		}
	}
	return out
}

// spellings are the value, its hex and its base64 spellings (the value
// first). Without whole, the base64 of the value alone (which differs from
// the characters it gives inside a longer base64 text only in its last
// one or two) is left out: a line of a secret is found in the base64 of
// the secret by the characters that depend on it alone.
func spellings(v string, whole bool) []string {
	out := []string{
		v,
		hex.EncodeToString([]byte(v)),
		strings.ToUpper(hex.EncodeToString([]byte(v))),
	}
	if whole {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(v)))
		}
	}
	n := len(v)
	for a := range 3 {
		b := make([]byte, a+n)
		copy(b[a:], v)
		// Character j covers bits [6j, 6j+6); the value's bits are
		// [8a, 8a+8n).
		lo, hi := (8*a+5)/6, (8*a+8*n)/6
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString(b)[lo:hi])
		}
	}
	return out
}

// fragments are the lines of a multi-line secret that are registered on
// their own, so that a window of a text (the last lines of a log, a chunk
// of a stream) that holds only part of the secret still has every line of
// it masked.
//
// The lines of a secret are what its line breaks ("\n", "\r\n") separate;
// a secret without line breaks that holds PEM armour and the two
// characters \n (a key kept JSON-escaped in an env file, a service
// account's JSON) is split at those instead. Each
// line is trimmed of spaces, tabs and carriage returns, and counts as a
// fragment when it is MinLen bytes or more, holds a letter, a digit or a
// non-ASCII byte, and is not PEM armour ("-----BEGIN …-----",
// "-----END …-----"): those lines are the same in every key and would
// mask a public certificate's armour too. A secret that is a single line
// has no fragments.
func fragments(secret string) []string {
	var lines []string
	switch {
	case strings.Contains(secret, "\n"):
		lines = strings.Split(secret, "\n")
	case strings.Contains(secret, `\n`) && strings.Contains(secret, "-----BEGIN "):
		lines = strings.Split(secret, `\n`)
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, `\r`)
		}
	default:
		return nil
	}
	var out []string
	for _, l := range lines {
		l = strings.Trim(l, " \t\r")
		if len(l) < MinLen || pemArmour(l) || !hasWordByte(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// pemArmour reports whether line is a PEM (or PGP, OpenSSH) armour line.
func pemArmour(line string) bool {
	return (strings.HasPrefix(line, "-----BEGIN ") || strings.HasPrefix(line, "-----END ")) &&
		strings.HasSuffix(line, "-----")
}

// hasWordByte reports whether s holds an ASCII letter or digit or a
// non-ASCII byte: a line of punctuation alone ("-----", "},") is structure,
// not secret.
func hasWordByte(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
