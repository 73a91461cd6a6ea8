package sqliteadapter

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/binkyhq/binky/sdk/adaptertest"
)

// TestConformance builds binky-adapter-sqlite and runs the adapter
// conformance suite against the binary, over both tiers.
func TestConformance(t *testing.T) {
	if os.Getenv("BINKY_TEST_WINE") == "1" {
		t.Skip("under Wine: needs the go toolchain to build the adapter; the Linux tier runs it (docs/windows.md)")
	}
	bin := filepath.Join(t.TempDir(), "binky-adapter-sqlite")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/binky-adapter-sqlite")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build binky-adapter-sqlite: %v\n%s", err, out)
	}
	adaptertest.Test(t, adaptertest.Options{Binary: bin, DataDir: t.TempDir(), Project: "acme"})
}
