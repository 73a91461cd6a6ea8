package ctl

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestStartFailureReason: the reason a daemon recorded is read back as one
// line for that daemon's pid only.
func TestStartFailureReason(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if got := startFailureReason(home, os.Getpid()); got != "" {
		t.Errorf("no file: got %q; want empty", got)
	}
	RecordStartFailure(home, errors.New("open registry /h/binky.db: not a binky registry:\n  it is not a SQLite database"))
	want := "open registry /h/binky.db: not a binky registry: it is not a SQLite database"
	if got := startFailureReason(home, os.Getpid()); got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := startFailureReason(home, os.Getpid()+1); got != "" {
		t.Errorf("another pid: got %q; want empty (a stale reason is not this daemon's)", got)
	}
	st, err := os.Stat(filepath.Join(home, StartFailureName))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 { // Windows: ACLs, not modes
		t.Errorf("mode %v; want 0600", st.Mode().Perm())
	}
}
