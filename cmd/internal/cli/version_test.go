package cli

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	oldV, oldC := version, commit
	t.Cleanup(func() { version, commit = oldV, oldC })

	version, commit = "v1.2.3", "0123456789abcdef"
	if got := Version(); !strings.HasPrefix(got, "binky v1.2.3 (commit 0123456789ab, ") {
		t.Errorf("linker-set: got %q", got)
	}
	if got := Number(); got != "v1.2.3" {
		t.Errorf("Number: got %q; want v1.2.3", got)
	}

	// A plain go build: nothing set by the linker; the build info (a test
	// binary has no module version) gives "dev", never an empty string.
	version, commit = "", ""
	v, c := buildVersion()
	if v == "" || c == "" {
		t.Errorf("fallback: got %q, %q; want non-empty", v, c)
	}
}
