package winjob

import (
	"strings"
	"testing"
)

func TestNameRoundTrip(t *testing.T) {
	for _, m := range []string{
		"h1/proj/main/web",
		`h1/proj/feat\x/web`,
		"h1/proj/50%/web",
		"h1/proj/%5C/web",
		"h1/proj/%25/db#migrate",
	} {
		n := Name(m)
		if strings.Contains(n, `\`) {
			t.Errorf("Name(%q) = %q; holds a backslash", m, n)
		}
		if got, ok := MarkerOf(n); !ok || got != m {
			t.Errorf("MarkerOf(Name(%q)) = %q, %v; want the marker", m, got, ok)
		}
	}
	if !strings.HasPrefix(Name("h1/p/w/s"), Name("h1/p/w/")) {
		t.Error("a world's marker prefix is not a prefix of its services' job names")
	}
	long := strings.Repeat("x", 300)
	if n := Name(long); len(n) > maxName {
		t.Errorf("Name(300 chars) is %d long; want at most %d", len(n), maxName)
	} else if _, ok := MarkerOf(n); ok {
		t.Errorf("MarkerOf(%q): ok for a hashed name", n)
	}
	if _, ok := MarkerOf("other-job"); ok {
		t.Error("MarkerOf(other-job): ok")
	}
}
