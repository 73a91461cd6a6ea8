package testbin

import (
	"os"
	"os/exec"
	"testing"
)

// CopySelf copies the running test binary to dst, mode 0755. cp writes
// the copy, not this process: a file this process held open for writing
// would be inherited by a child that another parallel test forks
// meanwhile, and an exec of the copy would fail with "text file busy"
// until that child execs (golang/go#22315).
func CopySelf(t testing.TB, dst string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", self, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy the test binary to %s: %v\n%s", dst, err, out)
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
}
