package logview

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/redact"
)

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.log")
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d token=s3cret-value\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	red := redact.New("s3cret-value")
	for _, tc := range []struct {
		name      string
		q         Query
		want      []string
		truncated bool
	}{
		{"last 2", Query{Lines: 2}, []string{"line 19 token=***", "line 20 token=***"}, true},
		{"all", Query{Lines: 50}, nil, false},
		{"grep", Query{Lines: 5, Grep: regexp.MustCompile(`^line 1[0-2] `)}, []string{"line 10 token=***", "line 11 token=***", "line 12 token=***"}, false},
		{"grep cannot find the secret", Query{Grep: regexp.MustCompile(`s3cret`)}, []string{}, false},
		{"bytes", Query{Lines: 10, MaxBytes: 30}, []string{"line 20 token=***"}, true},
	} {
		got, truncated, err := Tail(path, red, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == nil {
			if len(got) != 20 || truncated {
				t.Errorf("%s: got %d lines, truncated %v; want 20, false", tc.name, len(got), truncated)
			}
			continue
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || truncated != tc.truncated {
			t.Errorf("%s: got %q truncated %v; want %q truncated %v", tc.name, got, truncated, tc.want, tc.truncated)
		}
	}
	if got, _, err := Tail(filepath.Join(t.TempDir(), "none.log"), red, Query{Lines: 5}); err != nil || len(got) != 0 {
		t.Errorf("missing log: %q %v; want nothing, no error", got, err)
	}
}
