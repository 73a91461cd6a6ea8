package main

import (
	"strings"
	"testing"
)

// TestWantsTTY: run's command line asks for a terminal with -t, --tty or
// t among short flags, never by a word after "--".
func TestWantsTTY(t *testing.T) {
	for _, tc := range []struct {
		args string
		want bool
	}{
		{"run -it wt -- psql", true},
		{"run -t wt -- psql", true},
		{"run --tty wt -- psql", true},
		{"run -qti wt -- sh", true},
		{"run -i wt -- sh", false},
		{"run wt -- ls -t", false},
		{"run --project tiny wt -- top", false},
		{"run wt -- -t", false},
	} {
		if got := wantsTTY(strings.Fields(tc.args)); got != tc.want {
			t.Errorf("wantsTTY(%s) = %v; want %v", tc.args, got, tc.want)
		}
	}
}

// TestCompletionHost: completion asks the host named by --host among the
// words before the one being completed, else BINKY_HOST's.
func TestCompletionHost(t *testing.T) {
	for _, tc := range []struct {
		words, env, want string
	}{
		{"--host box env ", "", "box"},
		{"-- --host box env ", "", "box"},
		{"--host=box env ", "", "box"},
		{"env --host box ", "other", "box"},
		{"env ", "other", "other"},
		{"env ", "", ""},
		{"--host b", "", ""}, // a host name being completed
		{"run wt -- --host box ", "", ""},
	} {
		words := strings.Split(tc.words, " ")
		if got := completionHost(words, tc.env); got != tc.want {
			t.Errorf("completionHost(%q, %q) = %q; want %q", tc.words, tc.env, got, tc.want)
		}
	}
}
