package sdk

import (
	"strings"
	"testing"
)

func TestClaimRoundTrip(t *testing.T) {
	a := Target{Owner: "3f2a9c1b7d0e4a55", OwnerLabel: "/home/ann/.binky (uid 1000)"}
	claim := a.Claim()
	if got, want := claim, "binky-owner:3f2a9c1b7d0e4a55 /home/ann/.binky _uid 1000_"; got != want {
		t.Fatalf("Claim() = %q; want %q", got, want)
	}
	if owner, ok := ClaimOwner(claim); !ok || owner != a.Owner {
		t.Fatalf("ClaimOwner(%q) = %q, %v; want %q, true", claim, owner, ok, a.Owner)
	}
	if err := a.CheckClaim("database x", claim); err != nil {
		t.Fatalf("own claim refused: %v", err)
	}
	b := Target{Owner: "00aa00aa00aa00aa"}
	err := b.CheckClaim("database x", claim)
	if CodeOf(err) != CodeConflict {
		t.Fatalf("another home's claim: got %v; want a conflict", err)
	}
	for _, want := range []string{"database x", a.Owner, "/home/ann/.binky", b.Owner} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
}

func TestClaimUnclaimedAndLegacy(t *testing.T) {
	owner := Target{Owner: "abc"}
	for _, claim := range []string{"", "a comment somebody wrote", "binky-owner:"} {
		if err := owner.CheckClaim("db", claim); err != nil {
			t.Errorf("CheckClaim(%q) = %v; want nil (unclaimed: adopt)", claim, err)
		}
	}
	if err := (Target{}).CheckClaim("db", Target{Owner: "x"}.Claim()); err != nil {
		t.Errorf("a host without an owner checks nothing; got %v", err)
	}
	if (Target{}).Claim() != "" {
		t.Error("no owner, no claim")
	}
}

func TestClaimBounded(t *testing.T) {
	c := Target{Owner: "id", OwnerLabel: strings.Repeat("é'\"`;", 100)}.Claim()
	if len(c) > maxClaim {
		t.Fatalf("claim is %d bytes; want at most %d", len(c), maxClaim)
	}
	if strings.ContainsAny(c, "'\"`;é") {
		t.Fatalf("claim %q keeps a character some backend refuses", c)
	}
}
