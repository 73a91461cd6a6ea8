package adaptertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Binary returns the adapter binary called name for a test in the adapter's
// module: $BINKY_TEST_BIN/<name> when `make` built it there, else
// `go build ./cmd/<name>` into the test's temporary directory (the Go build
// cache makes a rebuild cheap).
func Binary(t testing.TB, name string) string {
	t.Helper()
	exe := name
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if dir := os.Getenv("BINKY_TEST_BIN"); dir != "" {
		p := filepath.Join(dir, exe)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	p := filepath.Join(t.TempDir(), exe)
	if out, err := exec.Command("go", "build", "-o", p, "./cmd/"+name).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return p
}

// MissingServer stops a test whose server could not be reached: under
// CI=true the test fails, elsewhere it is skipped. msg says what is missing
// and how to start it.
func MissingServer(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
