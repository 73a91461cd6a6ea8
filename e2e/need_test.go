package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// needCommand skips a test whose command (name) is not on PATH, saying how
// to install it; under CI (CI=true) it fails instead: CI must have it.
func needCommand(t *testing.T, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (%s): CI must have it", name, install)
		}
		t.Skipf("%s is not installed (%s)", name, install)
	}
}
