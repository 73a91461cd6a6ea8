//go:build !windows

package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketPathTooLong: a home too deep for a Unix socket's path is
// named with the limit and the fix, not left as "invalid argument".
func TestSocketPathTooLong(t *testing.T) {
	home := t.TempDir()
	for len(Socket(home)) <= maxSocketPath+8 {
		home = filepath.Join(home, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := ListenSocket(Socket(home))
	if err == nil || !strings.Contains(err.Error(), "use a shorter BINKY_HOME") {
		t.Errorf("listen: %v, want the path's limit named", err)
	}
	_, err = dial(context.Background(), home)
	if err == nil || !strings.Contains(err.Error(), "use a shorter BINKY_HOME") {
		t.Errorf("dial: %v, want the path's limit named", err)
	}
}
