package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// Spellings FuzzWindows writes a multi-line secret in.
const (
	encRaw          = iota // as it is
	encCRLF                // each "\n" written "\r\n"
	encGoJSON              // inside a JSON string, by encoding/json
	encGoJSONNoHTML        // the same with SetEscapeHTML(false) (JavaScript's JSON.stringify)
	encPyJSON              // Python's json.dumps (ensure_ascii)
	encQuery               // url.QueryEscape (Python's quote_plus)
	encPath                // url.PathEscape
	encJSURI               // JavaScript's encodeURIComponent
	encPyQuote             // Python's urllib.parse.quote, lower-case hex
	numEnc
)

// encodeSecret writes secret in spelling enc, unit by unit, and returns
// the text and, for each byte of secret, the span of the text that holds
// the unit (a byte or a rune) it belongs to; ok false when enc cannot
// spell secret (JSON needs valid UTF-8).
func encodeSecret(secret string, enc int) (text string, spans [][2]int, ok bool) {
	var b strings.Builder
	spans = make([][2]int, len(secret))
	put := func(i, n int, s string) {
		start := b.Len()
		b.WriteString(s)
		for k := i; k < i+n; k++ {
			spans[k] = [2]int{start, b.Len()}
		}
	}
	switch enc {
	case encRaw, encCRLF:
		for i := 0; i < len(secret); i++ {
			if enc == encCRLF && secret[i] == '\n' {
				put(i, 1, "\r\n")
			} else {
				put(i, 1, secret[i:i+1])
			}
		}
	case encGoJSON, encGoJSONNoHTML, encPyJSON:
		if !utf8.ValidString(secret) {
			return "", nil, false
		}
		for i, r := range secret {
			put(i, utf8.RuneLen(r), jsonRuneSpelling(r, enc))
		}
	default:
		for i := 0; i < len(secret); i++ {
			put(i, 1, percentByte(secret[i], enc))
		}
	}
	return b.String(), spans, true
}

func jsonRuneSpelling(r rune, enc int) string {
	if enc == encPyJSON {
		switch {
		case r == '"':
			return `\"`
		case r == '\\':
			return `\\`
		case shortEscape[r&0x7f] != 0 && r < 0x20:
			return `\` + string(shortEscape[r])
		case r < 0x20 || r > 0x7e && r < 0x10000:
			return fmt.Sprintf(`\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			return fmt.Sprintf(`\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3ff))
		}
		return string(r)
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(enc == encGoJSON)
	e.Encode(string(r))
	s := strings.TrimSpace(b.String())
	return s[1 : len(s)-1]
}

func percentByte(c byte, enc int) string {
	s := string([]byte{c})
	switch enc {
	case encQuery:
		return url.QueryEscape(s)
	case encPath:
		return url.PathEscape(s)
	case encJSURI:
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			return s
		}
		return fmt.Sprintf("%%%02X", c)
	default: // Python quote: safe "/", unreserved A-Za-z0-9_.-~
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			return s
		}
		return fmt.Sprintf("%%%02x", c)
	}
}

// lineSpan is a line of a secret, trimmed: secret[lo:hi].
type lineSpan struct{ lo, hi int }

// secretLines are the lines of secret that are fragments (see fragments).
func secretLines(secret string) []lineSpan {
	var out []lineSpan
	for lo := 0; lo <= len(secret); {
		hi := strings.IndexByte(secret[lo:], '\n')
		if hi < 0 {
			hi = len(secret)
		} else {
			hi += lo
		}
		a, b := lo, hi
		for a < b && strings.IndexByte(" \t\r", secret[a]) >= 0 {
			a++
		}
		for b > a && strings.IndexByte(" \t\r", secret[b-1]) >= 0 {
			b--
		}
		if l := secret[a:b]; len(l) >= MinLen && !pemArmour(l) && hasWordByte(l) {
			out = append(out, lineSpan{a, b})
		}
		lo = hi + 1
	}
	return out
}

// innocentText reports whether text can hold no part of secret that a
// Redactor masks: it has no line break, no escape and no MinLen bytes in a
// row of any form.
func innocentText(text string, forms []string) bool {
	if strings.ContainsAny(text, "\r\n%\\+") {
		return false
	}
	for _, f := range forms {
		for i := 0; i+MinLen <= len(f); i++ {
			if strings.Contains(text, f[i:i+MinLen]) {
				return false
			}
		}
	}
	return true
}

// FuzzWindows: a multi-line secret (the fuzzer's, broken into lines when it
// has none), written as it is, with CRLF line ends, inside a JSON string
// (three encoders) or percent-encoded (four encoders, both hex cases),
// between two texts; any window of that is redacted. Every piece of
// MinLen bytes or more of a line of the secret that the window holds whole
// must be masked, byte for byte, and no such piece may show in the output;
// the Writer, fed the window in writes of any size, must agree with
// String; and text that holds nothing of the secret passes unchanged.
func FuzzWindows(f *testing.F) {
	key := testPEM(9, 200)
	f.Add("loaded:\n", key, "\nexit 1\n", uint8(encRaw), uint16(30), uint16(400), uint8(5))
	f.Add(`{"k":"`, key, `"}`, uint8(encGoJSON), uint16(100), uint16(250), uint8(64))
	f.Add("", jsonSecret, "", uint8(encPyJSON), uint16(37), uint16(90), uint8(1))
	f.Add("pw=", urlPassword+"\n"+urlPassword, "&x=1", uint8(encJSURI), uint16(12), uint16(200), uint8(3))
	f.Add("a", "user: alice\r\npass: hunter22\r\n", "b", uint8(encCRLF), uint16(9), uint16(33), uint8(2))
	f.Fuzz(func(t *testing.T, pre, secret, post string, enc uint8, a16, b16 uint16, step uint8) {
		if len(secret) < MinLen || len(secret) > 1024 || len(pre)+len(post) > 1024 || strings.Contains(secret, "*") {
			return
		}
		if !strings.Contains(secret, "\n") {
			// Break it into lines of 4 to 32 bytes, at least two.
			w := min(int(step)%29+4, (len(secret)+1)/2)
			var b strings.Builder
			for i := 0; i < len(secret); i += w {
				if i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(secret[i:min(i+w, len(secret))])
			}
			secret = b.String()
		}
		e := int(enc) % numEnc
		encoded, spans, ok := encodeSecret(secret, e)
		if !ok {
			e = encRaw
			encoded, spans, _ = encodeSecret(secret, e)
		}
		text := pre + encoded + post
		a, b := int(a16)%(len(text)+1), int(b16)%(len(text)+1)
		if a > b {
			a, b = b, a
		}
		window := text[a:b]
		r := New(secret)
		got := r.String(window)

		// Every whole unit of a fragment line inside the window, when the
		// line's part there is MinLen bytes or more, is covered.
		covered, _, _ := r.matcher().cover([]byte(window), scan{start: true, end: true})
		shown := make([]bool, len(window)) // bytes of those parts
		var pieces []string
		for _, l := range secretLines(secret) {
			x, y := l.lo, l.hi // the bytes whose unit is in the window
			for x < y && len(pre)+spans[x][0] < a {
				x++
			}
			for y > x && len(pre)+spans[y-1][1] > b {
				y--
			}
			if y-x < MinLen {
				continue
			}
			lo, hi := len(pre)+spans[x][0]-a, len(pre)+spans[y-1][1]-a
			for k := lo; k < hi; k++ {
				shown[k] = true
				if covered == nil || !covered[k] {
					t.Fatalf("enc %d, window %q: byte %d of %q (line %q of the secret) is not masked: %q", e, window, k, window[lo:hi], secret[l.lo:l.hi], got)
				}
			}
			pieces = append(pieces, window[lo:hi])
		}
		// No such piece shows in the output, unless the window holds it
		// elsewhere too, in bytes that are no part of one.
		for _, p := range pieces {
			if !strings.Contains(got, p) {
				continue
			}
			elsewhere := false
			for i := 0; !elsewhere && i+len(p) <= len(window); i++ {
				if window[i:i+len(p)] == p && !bytes.Contains(boolBytes(shown[i:i+len(p)]), []byte{1}) {
					elsewhere = true
				}
			}
			if !elsewhere {
				t.Fatalf("enc %d, window %q: output %q shows %q of the secret", e, window, got, p)
			}
		}

		// The Writer agrees with String, whatever the write size, also
		// when the stream's first bytes (where a window's start is
		// settled) come one at a time.
		n := int(step)%67 + 1
		for _, first := range []int{0, 16} {
			var out bytes.Buffer
			w := r.Writer(&out)
			for off := 0; off < len(window); {
				k := n
				if off < first {
					k = 1
				}
				if _, err := w.Write([]byte(window[off:min(off+k, len(window))])); err != nil {
					t.Fatal(err)
				}
				off += k
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != got {
				t.Fatalf("enc %d: Writer (first %d bytes one by one, then writes of %d) of %q = %q; String = %q", e, first, n, window, out.String(), got)
			}
		}

		// Text that holds nothing of the secret passes unchanged.
		forms := Forms(secret)
		for _, s := range []string{pre, post, pre + post} {
			if !innocentText(s, forms) {
				continue
			}
			if got := r.String(s); got != s {
				t.Fatalf("String(%q) = %q; want it unchanged (it holds nothing of %q)", s, got, secret)
			}
			var out bytes.Buffer
			w := r.Writer(&out)
			for off := 0; off < len(s); off += n {
				w.Write([]byte(s[off:min(off+n, len(s))]))
			}
			w.Close()
			if out.String() != s {
				t.Fatalf("Writer(%q) = %q; want it unchanged", s, out.String())
			}
		}
	})
}

func boolBytes(b []bool) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}
