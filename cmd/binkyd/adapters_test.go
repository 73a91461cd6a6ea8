package main

import (
	"reflect"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]any
		wantErr bool
	}{
		{in: nil, want: nil},
		{in: []string{"dir=/tmp/x", "wal=true", "port=6379", "db=007", "eq=a=b"},
			want: map[string]any{"dir": "/tmp/x", "wal": true, "port": int64(6379), "db": "007", "eq": "a=b"}},
		{in: []string{"novalue"}, wantErr: true},
		{in: []string{"=x"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseConfig(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseConfig(%q): error %v; want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseConfig(%q): got %#v; want %#v", tt.in, got, tt.want)
		}
	}
}

// TestAdapterVerbsExitStatus: an unknown adapter is exit 2; listing an
// empty PATH succeeds.
func TestAdapterVerbsExitStatus(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	home := t.TempDir()
	tests := []struct {
		args []string
		want int
	}{
		{args: []string{"--home", home, "adapter", "test", "nope"}, want: 2},
		{args: []string{"--home", home, "adapters", "--json"}, want: 0},
		{args: []string{"--home", home, "adapter", "test", "x", "--config", "bad"}, want: 2},
	}
	for _, tt := range tests {
		if got := run(tt.args); got != tt.want {
			t.Errorf("binky %q: exit %d; want %d", tt.args, got, tt.want)
		}
	}
}
