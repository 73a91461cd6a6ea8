package tomlstr

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// TestQuoteRoundTrips: what Quote writes, a TOML parser reads back as s.
func TestQuoteRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `a "quoted" \ path`, "line\nnext\ttab", "\x01\x7f", "wörld 中"} {
		var v struct{ K string }
		if _, err := toml.Decode("K = "+Quote(s), &v); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if v.K != s {
			t.Errorf("%q came back as %q", s, v.K)
		}
	}
}
