package mysqladapter

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// TestRefusesNonSliceNames: a name binky would never send is refused with
// code invalid before anything reaches the server (the admin URL here
// points at a closed port, so any attempt would say unreachable).
func TestRefusesNonSliceNames(t *testing.T) {
	a := New()
	const admin = "mysql://root@127.0.0.1:1/"
	for _, s := range []string{"", "Upper_case", "../x_y", "nounderscore", "_lead", "trail_", "a_" + strings.Repeat("b", 70), "p_main;drop"} {
		_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, nil)})
		if got := sdk.CodeOf(err); got != sdk.CodeInvalid {
			t.Errorf("provision %q: code %q; want %q (%v)", s, got, sdk.CodeInvalid, err)
		}
	}
	_, err := a.Clone(t.Context(), &sdk.CloneRequest{Header: hdr(), Target: target(admin, "p_main", nil), Source: "../golden"})
	if got := sdk.CodeOf(err); got != sdk.CodeInvalid {
		t.Errorf("clone from %q: code %q; want %q", "../golden", got, sdk.CodeInvalid)
	}
}
