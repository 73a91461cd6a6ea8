package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkNoHang runs `check args…` in-process and fails the test when it has
// not returned within 30s: a hang detector (an open of a FIFO blocks
// forever, a read of /dev/zero never ends), not a timing assertion.
func checkNoHang(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.code, r.out, r.err = runCaptured(t, append([]string{"check"}, args...)...)
		done <- r
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(30 * time.Second):
		t.Fatalf("check %v has not returned after 30s: it blocks", args)
		return 0, "", ""
	}
}

// envFileRepo is a repository whose binky.toml names envFile as the
// project's env_file (line 3) and as service api's (line 7).
func envFileRepo(t *testing.T, envFile string) (repo, file string) {
	t.Helper()
	return checkRepo(t, `[project]
name = "acme"
env_file = "`+envFile+`"

[services.api]
cmd      = "api"
env_file = "`+envFile+`"
`)
}

func TestCheckEnvFileDirectory(t *testing.T) {
	repo, file := envFileRepo(t, "envdir")
	os.Mkdir(filepath.Join(repo, "envdir"), 0o755)
	code, out, errOut := checkNoHang(t, file)
	if code != 1 {
		t.Errorf("exit %d; want 1 (stdout %q, stderr %q)", code, out, errOut)
	}
	want := file + ":3: error: project.env_file: env_file " + filepath.Join(repo, "envdir") + " is a directory, not a regular file"
	if !strings.Contains(out, want) {
		t.Errorf("stdout %q; want %q", out, want)
	}
	if !strings.Contains(out, ":7: error: services.api.env_file: env_file") {
		t.Errorf("stdout %q; want the service's env_file too", out)
	}
	if strings.Contains(errOut, ": ok") {
		t.Errorf("stderr %q says ok", errOut)
	}
}

func TestCheckEnvFileLarge(t *testing.T) {
	repo, file := envFileRepo(t, "big.env")
	f, err := os.Create(filepath.Join(repo, "big.env"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20) // sparse: refused by its size, unread
	f.Close()
	code, out, _ := checkNoHang(t, file)
	if code != 1 || !strings.Contains(out, "env_file "+filepath.Join(repo, "big.env")+" is larger than 1048576 bytes") {
		t.Errorf("exit %d, stdout %q; want 1 and the file named as larger than 1048576 bytes", code, out)
	}
}

func TestCheckEnvFileParseAndMissing(t *testing.T) {
	repo, file := envFileRepo(t, ".env")
	os.WriteFile(filepath.Join(repo, ".env"), []byte("A=1\nnot a pair\n"), 0o600)
	code, out, _ := checkNoHang(t, file)
	if code != 1 || !strings.Contains(out, "error: project.env_file: env_file "+filepath.Join(repo, ".env")+": line 2: want KEY=value") {
		t.Errorf("exit %d, stdout %q; want 1 and the parse error with the file and line", code, out)
	}

	os.Remove(filepath.Join(repo, ".env"))
	code, out, errOut := checkNoHang(t, file)
	if code != 0 || !strings.Contains(out, "warning: project.env_file: env_file "+filepath.Join(repo, ".env")+" does not exist") {
		t.Errorf("exit %d, stdout %q; want 0 and a warning naming the missing file", code, out)
	}
	if !strings.Contains(errOut, "0 errors, 2 warnings") {
		t.Errorf("stderr %q; want 0 errors, 2 warnings", errOut)
	}

	os.WriteFile(filepath.Join(repo, ".env"), []byte("A=1\n"), 0o600)
	if code, out, errOut := checkNoHang(t, file); code != 0 || out != "" || !strings.Contains(errOut, ": ok") {
		t.Errorf("good env_file: exit %d, stdout %q, stderr %q; want 0 and ok", code, out, errOut)
	}
}
