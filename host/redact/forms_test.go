package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// TestBase64Embedded: a secret inside a longer base64 text (a JSON token,
// a basic-auth header of user:password) is masked at each of the three
// byte alignments, in both alphabets, padded or not, and none of the
// characters that depend on the secret alone survive.
func TestBase64Embedded(t *testing.T) {
	t.Parallel()
	const secret = "S3cr3t-Pa55w0rd?>"
	r := New(secret)
	for a := range 3 {
		for tail := range 3 {
			plain := []byte(strings.Repeat("u", a+3) + secret + strings.Repeat("v", tail+3))
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				text := "Authorization: Basic " + enc.EncodeToString(plain) + " end"
				got := r.String(text)
				if !strings.Contains(got, Mask) {
					t.Errorf("alignment %d: String(%q) = %q; want the secret masked", a, text, got)
				}
				for _, f := range Forms(secret) {
					if strings.Contains(got, f) {
						t.Errorf("alignment %d: String(%q) = %q; still holds the form %q", a, text, got, f)
					}
				}
			}
		}
	}
}

func TestHexAndStandaloneForms(t *testing.T) {
	t.Parallel()
	const secret = "hunter22"
	r := New(secret)
	for _, form := range []string{
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
	} {
		if got := r.String("x=" + form + ";"); got != "x=***;" {
			t.Errorf("String(x=%s;) = %q; want x=***;", form, got)
		}
	}
}

// TestSplitAcrossLines: a secret wrapped over lines, with one "\n" or
// "\r\n" between any two of its bytes, is masked whole (line breaks
// included), in String and through a Writer fed line by line.
func TestSplitAcrossLines(t *testing.T) {
	t.Parallel()
	const secret = "correct-horse-battery"
	r := New(secret)
	for i := 1; i < len(secret); i++ {
		for _, br := range []string{"\n", "\r\n"} {
			text := "token: " + secret[:i] + br + secret[i:] + "\nnext line\n"
			want := "token: ***\nnext line\n"
			if got := r.String(text); got != want {
				t.Errorf("String(%q) = %q; want %q", text, got, want)
			}
			var out bytes.Buffer
			w := r.Writer(&out)
			for _, line := range strings.SplitAfter(text, "\n") {
				w.Write([]byte(line))
			}
			w.Close()
			if out.String() != want {
				t.Errorf("Writer(%q) = %q; want %q", text, out.String(), want)
			}
		}
	}
	// Wrapped base64, as base64(1) prints it at 76 columns.
	long := strings.Repeat("k3y-", 40) + secret
	enc := base64.StdEncoding.EncodeToString([]byte(long))
	var wrapped strings.Builder
	for i := 0; i < len(enc); i += 76 {
		wrapped.WriteString(enc[i:min(i+76, len(enc))] + "\n")
	}
	r2 := New(long)
	if got := r2.String(wrapped.String()); got != "***\n" {
		t.Errorf("wrapped base64: got %q; want ***", got)
	}
	// Two line breaks in one gap are not a wrapped secret.
	if got := r.String("correct-horse\n\nbattery"); got != "correct-horse\n\nbattery" {
		t.Errorf("String with a blank line inside = %q; want it unchanged", got)
	}
}

// TestWriterPassesPlainTextAtOnce: a line that cannot begin a secret is
// written at once; a line ending in what may begin one is held until the
// next line settles it, and Flush masks a held start of MinLen bytes.
func TestWriterPassesPlainTextAtOnce(t *testing.T) {
	t.Parallel()
	r := New("hunter22-and-more")
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte("listening on :8080\n"))
	if got := out.String(); got != "listening on :8080\n" {
		t.Errorf("after a plain line got %q; want it written at once", got)
	}
	w.Write([]byte("password hunter22\n"))
	if got, held := out.String(), w.Held(); got != "listening on :8080\npassword " || held != len("hunter22\n") {
		t.Errorf("after a line ending in a secret's start: wrote %q, held %d", got, held)
	}
	w.Write([]byte("-and-more ok\n"))
	if got := out.String(); got != "listening on :8080\npassword *** ok\n" {
		t.Errorf("after the rest: got %q", got)
	}
	w.Write([]byte("then hunt"))
	w.Flush()
	if got := out.String(); !strings.HasSuffix(got, "then ***") {
		t.Errorf("Flush with a held start of a secret: got %q; want it masked", got)
	}
	w.Write([]byte(" hunter\n"))
	w.Flush()
	if got := out.String(); !strings.HasSuffix(got, "then *** ***\n") {
		t.Errorf("Flush with a held line ending in a secret's start: got %q; want the start masked, the line break kept", got)
	}
	w.Write([]byte(" and hu"))
	w.Flush()
	if got := out.String(); !strings.HasSuffix(got, " and hu") || w.Held() != 0 {
		t.Errorf("Flush with a held start shorter than MinLen: got %q, held %d", got, w.Held())
	}
}

func TestAddAddress(t *testing.T) {
	t.Parallel()
	r := New()
	r.AddAddress("postgres://acme_main:Sl1ce-Pw%2F9@127.0.0.1:5432/acme_main")
	r.AddAddress("root:My-Dsn-Pw@tcp(127.0.0.1:3306)/acme_main")
	r.AddAddress("sqlite:///home/me/acme_main.db")
	in := "pw Sl1ce-Pw/9 dsn My-Dsn-Pw path /home/me/acme_main.db"
	if got, want := r.String(in), "pw *** dsn *** path /home/me/acme_main.db"; got != want {
		t.Errorf("String(%q) = %q; want %q", in, got, want)
	}
}
