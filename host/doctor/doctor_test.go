package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestEmptyHome: a fresh BINKY_HOME has nothing wrong with it, and doctor
// leaves it as it found it (it does not even create the directory).
func TestEmptyHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	leases := filepath.Join(t.TempDir(), "leases")
	fs := Run(context.Background(), Env{Home: home, PathEnv: t.TempDir(), LeaseDir: leases})
	for _, f := range fs {
		if slices.Contains([]string{"daemon", "registry", "golden", "copy-on-write", "worktrees", "logs", "ca", "leases"}, f.Check) && f.Status != StatusOK {
			t.Errorf("%s: %s %s; want ok on an empty home", f.Check, f.Status, f.Message)
		}
	}
	for _, dir := range []string{home, leases} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("doctor created %s (stat err %v); it must change nothing", dir, err)
		}
	}
}

// TestBrokenRegistry: a registry that is not SQLite is a failure with a fix.
func TestBrokenRegistry(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "binky.db"), []byte("not a database, just text long enough to be read as a header……………………………………"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := checkRegistry(context.Background(), &Env{Home: home})
	if !Failed(fs) {
		t.Fatalf("checkRegistry on a text file: %v; want a failure", fs)
	}
	for _, f := range fs {
		if f.Status == StatusFail && f.Fix == "" {
			t.Errorf("failure without a fix: %s", f.Message)
		}
	}
}

// TestHungAdapter: an adapter that never answers describe is failed as
// hung, by its name, and the finding gives a fix.
func TestHungAdapter(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep(1)")
	}
	dir := t.TempDir()
	installScript(t, dir, "binky-adapter-hang", "#!/bin/sh\nexec "+sleep+" 60\n")
	fs := checkAdapters(context.Background(), &Env{Home: t.TempDir(), PathEnv: dir})
	var got *Finding
	for i, f := range fs {
		if f.Status == StatusFail && strings.Contains(f.Message, "adapter hang ") {
			got = &fs[i]
		}
	}
	switch {
	case got == nil:
		t.Fatalf("findings %v; want a failure naming adapter hang", fs)
	case !strings.Contains(got.Message, "hung"):
		t.Errorf("finding %q; want it to say the adapter hung", got.Message)
	case !strings.Contains(got.Fix, "binky adapter test hang"):
		t.Errorf("fix %q; want binky adapter test hang", got.Fix)
	}
}

// TestBrokenAdapter: an adapter that answers describe with nothing is
// failed by its name, and not called hung.
func TestBrokenAdapter(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil || runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	installScript(t, dir, "binky-adapter-broken", "#!/bin/sh\necho not json\nexit 1\n")
	fs := checkAdapters(context.Background(), &Env{Home: t.TempDir(), PathEnv: dir})
	found := false
	for _, f := range fs {
		if f.Status == StatusFail && strings.Contains(f.Message, "adapter broken ") {
			found = true
			if strings.Contains(f.Message, "hung") {
				t.Errorf("finding %q calls an adapter that replied at once hung", f.Message)
			}
		}
	}
	if !found {
		t.Errorf("findings %v; want a failure naming adapter broken", fs)
	}
}

// installScript writes an executable script into dir under a temporary
// name, closes it, and only then renames it into place: discovery must
// never find (and exec) a file that is still open for writing ("text file
// busy").
func installScript(t *testing.T, dir, name, script string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestLogDirSize: past MaxLogDir is a warning.
func TestLogDirSize(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "logs", "p", "w")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "svc.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxLogDir + 1); err != nil { // sparse: no real disk used
		t.Fatal(err)
	}
	f.Close()
	fs := checkLogs(context.Background(), &Env{Home: home})
	if len(fs) != 1 || fs[0].Status != StatusWarn {
		t.Errorf("checkLogs = %v; want one warning", fs)
	}
}
