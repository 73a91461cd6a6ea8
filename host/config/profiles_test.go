package config

import (
	"slices"
	"testing"
)

// TestNeeds: a selection of services runs with everything it depends on,
// over and over, in file order; names that are not services are dropped.
func TestNeeds(t *testing.T) {
	t.Parallel()
	c, ds, err := Load("testdata/valid/profiles.toml")
	if err != nil || ds.HasErrors() {
		t.Fatalf("load: %v %v", err, ds)
	}
	tests := []struct {
		names, want []string
	}{
		{[]string{"web"}, []string{"web"}},
		{[]string{"api"}, []string{"db", "api"}},
		{[]string{"worker", "web"}, []string{"db", "web", "worker"}},
		{[]string{"nope", "api", "api"}, []string{"db", "api"}},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := c.Needs(tt.names); !slices.Equal(got, tt.want) {
			t.Errorf("Needs(%v) = %v; want %v", tt.names, got, tt.want)
		}
	}
	if got := c.ProfileNames(); !slices.Equal(got, []string{"backend", "frontend"}) {
		t.Errorf("ProfileNames() = %v; want backend, frontend", got)
	}
}
