package main

import "testing"

// TestHandedOff: binkyd's verbs are found behind binky's own flags, and
// binky's verbs (daemon start among them) stay binky's.
func TestHandedOff(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"mcp"}, true},
		{[]string{"--home", "/h", "mcp", "--log-level", "off"}, true},
		{[]string{"--home=/h", "logs", "-f", "wt"}, true},
		{[]string{"daemon", "run"}, true},
		{[]string{"--home", "/h", "daemon", "run"}, true},
		{[]string{"adapter", "test", "x"}, true},
		{[]string{"check", "--json"}, true},
		{[]string{"daemon", "start"}, false},
		{[]string{"daemon"}, false},
		{[]string{"--home", "mcp", "status"}, false}, // mcp is --home's value
		{[]string{"env", "mcp"}, false},
		{[]string{"status"}, false},
		{[]string{"--version"}, false},
		{[]string{"--", "mcp"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := handedOff(tt.args); got != tt.want {
			t.Errorf("handedOff(%q) = %v; want %v", tt.args, got, tt.want)
		}
	}
}
