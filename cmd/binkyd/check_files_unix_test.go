//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/binkyhq/binky/host/config"
)

// unblockFIFO releases a reader a regression left blocked on p.
func unblockFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

func TestCheckFIFOConfig(t *testing.T) {
	repo, file := checkRepo(t, "")
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, file)
	// Named, and found from the repository too.
	for _, arg := range []string{file, repo} {
		code, out, errOut := checkNoHang(t, arg)
		if code != 2 {
			t.Errorf("check %s: exit %d; want 2", arg, code)
		}
		if want := file + ": cannot read: is a FIFO, not a regular file"; !strings.Contains(errOut, want) {
			t.Errorf("check %s: stderr %q; want %q", arg, errOut, want)
		}
		if out != "" || strings.Contains(errOut, ": ok") {
			t.Errorf("check %s: stdout %q, stderr %q", arg, out, errOut)
		}
	}
	code, out, _ := checkNoHang(t, "--json", file)
	var ds []config.Diagnostic
	if err := json.Unmarshal([]byte(out), &ds); err != nil || code != 2 || len(ds) != 1 || ds[0].Severity != config.SeverityError || ds[0].File != file || ds[0].Message != "cannot read: is a FIFO, not a regular file" {
		t.Errorf("check --json: exit %d, %+v (%v); want 2 and one error naming the FIFO", code, ds, err)
	}
}

func TestCheckEnvFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, file := envFileRepo(t, "/dev/zero")
	code, out, errOut := checkNoHang(t, file)
	if code != 1 {
		t.Errorf("exit %d; want 1 (stdout %q, stderr %q)", code, out, errOut)
	}
	if want := file + ":3: error: project.env_file: env_file /dev/zero is a character device, not a regular file"; !strings.Contains(out, want) {
		t.Errorf("stdout %q; want %q", out, want)
	}
	if !strings.Contains(errOut, "2 errors") {
		t.Errorf("stderr %q; want 2 errors", errOut)
	}
}

func TestCheckEnvFileFIFO(t *testing.T) {
	repo, file := envFileRepo(t, ".env")
	p := filepath.Join(repo, ".env")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	unblockFIFO(t, p)
	code, out, _ := checkNoHang(t, file)
	if code != 1 || !strings.Contains(out, "env_file "+p+" is a FIFO, not a regular file") {
		t.Errorf("exit %d, stdout %q; want 1 and the FIFO named", code, out)
	}
}
