package proxy

import (
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"web.a.b.localhost", "web.a.b.localhost", true},
		{"Web.A.B.LocalHost:8080", "web.a.b.localhost", true},
		{"web.a.b.localhost.", "web.a.b.localhost", true},
		{"[::1]:80", "::1", true},
		{"[::1]", "::1", true},
		{"127.0.0.1:7355", "127.0.0.1", true},
		{"", "", false},
		{":80", "", false},
		{"a.localhost:", "", false},
		{"a.localhost:80:80", "", false},
		{"a.localhost:http", "", false},
		{"[::1", "", false},
		{"[::1]x", "", false},
		{"a b.localhost", "", false},
		{"a/b.localhost", "", false},
		{"user@a.localhost", "", false},
		{"a.localhost%00", "", false},
	} {
		got, ok := normalizeHost(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("normalizeHost(%q): got %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIsLocalhost(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"localhost", true},
		{"binky.localhost", true},
		{"web.a.b.localhost", true},
		{".localhost", false},
		{"a..localhost", false},
		{"localhost.evil.com", false},
		{"evillocalhost", false},
		{"127.0.0.1", false},
	} {
		if got := isLocalhost(tc.in); got != tc.want {
			t.Errorf("isLocalhost(%q): got %v; want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzNormalizeHost checks the Host parser never accepts what it should not:
// a result is lowercase, has no port, whitespace, slash or control byte, and
// normalising it again changes nothing.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"web.a.b.localhost", "A.LOCALHOST:80", "[::1]:443", "evil.com", "", "a.localhost."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, ok := normalizeHost(in)
		if !ok {
			if h != "" {
				t.Fatalf("normalizeHost(%q) rejected but returned %q", in, h)
			}
			return
		}
		if h == "" || h != strings.ToLower(h) || strings.ContainsAny(h, " /\\@%\t\r\n") {
			t.Fatalf("normalizeHost(%q) = %q: not a clean host", in, h)
		}
		if !strings.Contains(h, ":") { // IPv6 literals keep their colons
			if again, ok2 := normalizeHost(h); !ok2 || again != h {
				t.Fatalf("normalizeHost(%q) = %q, again = %q %v", in, h, again, ok2)
			}
		}
		if isLocalhost(h) && !strings.HasSuffix(h, "localhost") {
			t.Fatalf("isLocalhost(%q) true without the localhost suffix", h)
		}
	})
}
