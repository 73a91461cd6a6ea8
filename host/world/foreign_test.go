package world

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestOtherHome: a destroy refused because the slice is another home's
// (the adapter's words, sdk.Target.CheckClaim, as they reach the host
// wrapped) is read as that home, label included; any other failure is not.
func TestOtherHome(t *testing.T) {
	mine := sdk.Target{Slice: "shop_main", Owner: "aaaa000011112222", OwnerLabel: "/home/ann/.binky uid 1000"}
	theirs := sdk.Target{Owner: "bbbb333344445555", OwnerLabel: "/home/bob/.binky uid 1001"}
	refusal := mine.CheckClaim(`database "shop_main"`, theirs.Claim())
	if refusal == nil {
		t.Fatal("CheckClaim accepted another home's claim")
	}
	cases := []struct {
		name  string
		err   error
		owner string
	}{
		{"claimed by another home", fmt.Errorf("destroy: %w", refusal), "bbbb333344445555 (/home/bob/.binky uid 1001)"},
		{"no label", fmt.Errorf("destroy: %w", mine.CheckClaim("x", "binky-owner:cccc")), "cccc"},
		{"another conflict", sdk.Errorf(sdk.CodeConflict, "vhost %q does not exist", "v"), ""},
		{"unreachable", sdk.Errorf(sdk.CodeUnreachable, "dial tcp: connection refused"), ""},
		{"not an adapter error", errors.New("belongs to another binky home, x, not to this one"), ""},
		{"none", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			owner, ok := otherHome(c.err)
			if owner != c.owner || ok != (c.owner != "") {
				t.Errorf("otherHome = %q, %v; want %q, %v", owner, ok, c.owner, c.owner != "")
			}
		})
	}
	msg := foreignSlice("bbbb333344445555 (/home/bob/.binky uid 1001)")
	for _, want := range []string{"belongs to another binky home", "/home/bob/.binky uid 1001", "in use by it", "left it alone"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "by hand") {
		t.Errorf("%q tells the user to drop another home's slice by hand", msg)
	}
}
