package api

import "testing"

// TestResetSummary (issue 40): a Redis-only world's reset does not claim
// a golden state; a cloned slice's does.
func TestResetSummary(t *testing.T) {
	t.Parallel()
	w := World{Services: []Service{
		{Name: "api", Kind: "cmd"},
		{Name: "db", Kind: "adapter", Adapter: "postgres", Clone: "template"},
		{Name: "cache", Kind: "adapter", Adapter: "redis"},
	}}
	for _, tc := range []struct {
		service, want string
	}{
		{"", "db back to the golden state; cache made anew (no golden template: provisioned, migrated and seeded)"},
		{"cache", "cache made anew (no golden template: provisioned, migrated and seeded)"},
		{"db", "db back to the golden state"},
	} {
		if got := ResetSummary(w, tc.service); got != tc.want {
			t.Errorf("ResetSummary(%q) = %q; want %q", tc.service, got, tc.want)
		}
	}
}
