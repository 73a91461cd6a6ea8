package tokens

import (
	"strings"
	"testing"
)

// FuzzRender checks three properties of Render on any input: no coords is
// the identity; mapping every token to itself is the identity; mapping
// every token to "" removes exactly those bytes.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"", "--port ${self.port}", "${a${b}}", "${}", "$${x}}", "${env.A}${env.B}", "${x.y", "→${a.b}←"} {
		f.Add(s, "api")
	}
	f.Fuzz(func(t *testing.T, s, self string) {
		if got := Render(s, self, nil); got != s {
			t.Fatalf("Render(%q) with no coords = %q; want it unchanged", s, got)
		}
		refs := Refs(s)
		same := map[string]string{}
		blank := map[string]string{}
		removed := 0
		for _, r := range refs {
			same[r] = "${" + r + "}"
			blank[r] = ""
			removed += len(r) + 3
		}
		if got := Render(s, "", same); got != s {
			t.Fatalf("Render(%q) with identity coords = %q; want it unchanged", s, got)
		}
		if got := Render(s, "", blank); len(got) != len(s)-removed {
			t.Fatalf("Render(%q) blanking %q = %q (len %d); want len %d", s, refs, got, len(got), len(s)-removed)
		}
		if self != "" {
			// self.x resolves through <self>.x and nothing else changes.
			c := map[string]string{self + ".port": "1"}
			want := strings.Clone(s)
			for _, r := range refs {
				if r == "self.port" || r == self+".port" {
					want = strings.Replace(want, "${"+r+"}", "\x00", 1)
				}
			}
			want = strings.ReplaceAll(want, "\x00", "1")
			if !strings.Contains(s, "\x00") {
				if got := Render(s, self, c); got != want {
					t.Fatalf("Render(%q, %q) = %q; want %q", s, self, got, want)
				}
			}
		}
	})
}

// FuzzRefs checks that every reference is a well-formed token that occurs
// in the input, in order.
func FuzzRefs(f *testing.F) {
	for _, s := range []string{"", "${self.port}", "${a${b}}", "${env.X}${env.Y}", "${", "}${a.b}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs := Refs(s)
		if n := strings.Count(s, "${"); len(refs) > n {
			t.Fatalf("Refs(%q) found %d tokens in %d ${", s, len(refs), n)
		}
		rest := s
		for _, r := range refs {
			if r == "" || strings.ContainsAny(r, "${} \n") {
				t.Fatalf("Refs(%q) returned malformed name %q", s, r)
			}
			i := strings.Index(rest, "${"+r+"}")
			if i < 0 {
				t.Fatalf("Refs(%q): %q not found in order", s, r)
			}
			rest = rest[i+len(r)+3:]
		}
	})
}
