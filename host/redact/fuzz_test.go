package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzRedact checks, for any input, secrets and write sizes, that neither
// String nor the streaming Writer lets a secret through, and that the Writer
// gives exactly what String gives.
//
// A secret containing '*' may appear to be "in" the output when the Mask
// itself completes it (secret "ab**" and text "ab" before a mask read
// "ab***"); those bytes are ordinary text next to a mask, not a leak, so the
// containment check is made only for secrets without '*'. The equality with
// String covers them all.
func FuzzRedact(f *testing.F) {
	f.Add("pw=hunter22 and hunter22", "hunter22", "", uint8(3))
	f.Add("postgres://u:p%40ss@h/db then p@ss", "postgres://u:p@ss@h/db", "p@ss", uint8(1))
	f.Add("abcdefghi", "abcdef", "defghi", uint8(2))
	f.Add("line one\nline two", "one\nline", "two", uint8(5))
	f.Fuzz(func(t *testing.T, in, s1, s2 string, step uint8) {
		r := New(s1, s2)
		got := r.String(in)
		var out bytes.Buffer
		w := r.Writer(&out)
		n := int(step)%17 + 1
		for off := 0; off < len(in); off += n {
			if _, err := w.Write([]byte(in[off:min(off+n, len(in))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != got {
			t.Fatalf("Writer (writes of %d) = %q; String = %q", n, out.String(), got)
		}
		for _, s := range []string{s1, s2} {
			if len(s) < MinLen {
				continue
			}
			for _, f := range Forms(s) {
				if !strings.Contains(f, "*") && strings.Contains(got, f) {
					t.Fatalf("String(%q) = %q; still contains %q, a form of secret %q", in, got, f, s)
				}
			}
		}
	})
}

// FuzzForms: for any secret of MinLen bytes or more and any text around
// it, the redacted output holds none of the secret's forms, whether the
// text carries the secret in one of them, inside a longer base64 text at
// any alignment, wrapped over lines (a line break after any byte the bits
// of wrap choose), inside a JSON string (three encoders) or percent-encoded
// (four encoders, both hex cases) — and then not that spelling either; and
// the Writer, fed line by line, agrees with String.
func FuzzForms(f *testing.F) {
	f.Add("token=", "S3cr3t-PgPw/9", " end", uint8(1), uint64(0))
	f.Add("", "hunter22", "\n", uint8(2), uint64(0b1010))
	f.Add("Basic ", "user:pässwörd", "", uint8(0), uint64(1<<5))
	f.Add("\r", "abcd", "abcd", uint8(7), uint64(^uint64(0)))
	f.Fuzz(func(t *testing.T, pre, secret, post string, align uint8, wrap uint64) {
		if len(secret) < MinLen || strings.Contains(secret, "*") {
			return
		}
		// Matching costs text length × secret length when a secret repeats
		// one byte and the text repeats it too (every position begins an
		// occurrence): a 4 KB secret of one byte took seconds per input,
		// which the fuzzer reports as a hang. Escape sequences make each
		// step of that dearer: a text of 4000 \" around a secret of 1024 "
		// took seconds per input too, counted as a hang on a busy machine
		// (testdata 36d7f49f9a987d19). This target checks what is masked,
		// not speed (BenchmarkRepeatedByteSecret and
		// BenchmarkRepeatedEscapedSecret measure that), so it keeps to
		// secrets and texts of realistic sizes.
		if len(secret) > 1024 || len(pre)+len(post) > 2048 {
			return
		}
		r := New(secret)
		forms := Forms(secret)
		texts := []string{pre + secret + post}
		for _, form := range forms {
			texts = append(texts, pre+form+post)
		}
		a := int(align) % 3
		plain := []byte(strings.Repeat("\x00", a) + pre + secret + post)
		texts = append(texts, base64.StdEncoding.EncodeToString(plain), base64.RawURLEncoding.EncodeToString(plain))
		for _, form := range forms[:min(len(forms), 4)] {
			var b strings.Builder
			b.WriteString(pre)
			for i := range len(form) {
				b.WriteByte(form[i])
				if i < len(form)-1 && wrap&(1<<(i%64)) != 0 {
					if wrap&(1<<63) != 0 {
						b.WriteString("\r\n")
					} else {
						b.WriteString("\n")
					}
				}
			}
			b.WriteString(post)
			texts = append(texts, b.String())
		}
		var escaped []string
		for e := encGoJSON; e < numEnc; e++ {
			if enc, _, ok := encodeSecret(secret, e); ok {
				escaped = append(escaped, enc)
				texts = append(texts, pre+enc+post)
			}
		}
		for _, text := range texts {
			got := r.String(text)
			for _, form := range forms {
				if !strings.Contains(form, "*") && strings.Contains(got, form) {
					t.Fatalf("String(%q) = %q; still contains %q, a form of %q", text, got, form, secret)
				}
			}
			for _, enc := range escaped {
				if strings.Contains(got, enc) {
					t.Fatalf("String(%q) = %q; still contains %q, an escaped spelling of %q", text, got, enc, secret)
				}
			}
			var out bytes.Buffer
			w := r.Writer(&out)
			for _, line := range strings.SplitAfter(text, "\n") {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			if out.String() != got {
				t.Fatalf("Writer fed %q line by line = %q; String = %q", text, out.String(), got)
			}
		}
	})
}
