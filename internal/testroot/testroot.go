// Package testroot lets a test that needs root (to act as another Unix
// user, to mount a file system) say so once: it runs as root, skips
// elsewhere saying why, and fails under CI=true, which runs the tests as
// root, so such a test can never pass by not running there. Product code
// never imports it.
package testroot

import (
	"os"
	"testing"
)

// Need skips t unless this process is root, with "needs root, <why>";
// under CI=true it fails instead.
func Need(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs root, %s; CI runs the tests as root", why)
	}
	t.Skipf("needs root, %s", why)
}
