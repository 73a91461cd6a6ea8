package redact

import (
	"bytes"
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
			if len(s) < MinLen || strings.Contains(s, "*") {
				continue
			}
			if strings.Contains(got, s) {
				t.Fatalf("String(%q) = %q; still contains secret %q", in, got, s)
			}
		}
	})
}
