package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/binkyhq/binky/internal/wine"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// goBinary is the Go filestore example: $BINKY_TEST_BIN's when make built
// it there, else filestore.go built once for the package's tests (a link
// under load took half a minute, and two tests each built it).
func goBinary(t *testing.T) string {
	t.Helper()
	exe := "binky-adapter-filestore"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if dir := os.Getenv("BINKY_TEST_BIN"); dir != "" {
		p := filepath.Join(dir, exe)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "binky-filestore-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, exe)
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("build the Go filestore example: %v", built.err)
	}
	return built.path
}

// built is the filestore binary goBinary built, removed by TestMain.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// pyScript is filestore.py, when python3 is there to run it.
func pyScript(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("filestore.py runs through its #! line, which Windows does not read")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is not on PATH: %v", err)
		}
		t.Skip("python3 is not on PATH; install Python 3 to test filestore.py")
	}
	path, err := filepath.Abs("filestore.py")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConformance(t *testing.T) {
	wine.Skip(t, "needs the go toolchain to build the example")
	bin := goBinary(t)
	t.Run("go", func(t *testing.T) {
		adaptertest.Test(t, adaptertest.Options{Binary: bin, Project: "acme"})
	})
	t.Run("go with config root", func(t *testing.T) {
		adaptertest.Test(t, adaptertest.Options{Binary: bin, Project: "acme", Config: map[string]any{"root": t.TempDir()}})
	})
	t.Run("python", func(t *testing.T) {
		adaptertest.Test(t, adaptertest.Options{Binary: pyScript(t), Project: "acme"})
	})
}

// TestOneShotEdges checks what the suite does not: usage, the size limit,
// where a slice lands and what resolve answers.
func TestOneShotEdges(t *testing.T) {
	wine.Skip(t, "needs the go toolchain to build the example")
	t.Run("go", func(t *testing.T) { oneShotEdges(t, goBinary(t)) })
	t.Run("python", func(t *testing.T) { oneShotEdges(t, pyScript(t)) })
}

func oneShotEdges(t *testing.T, bin string) {
	root := t.TempDir()
	req := `{"protocol":1,"slice":"acme_main","config":{"root":"` + filepath.ToSlash(root) + `"}}`
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantExit int
		wantCode sdk.Code
	}{
		{"no call", nil, "", 2, ""},
		{"unknown call", []string{"create"}, req, 2, ""},
		{"too large", []string{"provision"}, `{"protocol":1,"slice":"acme_main","pad":"` + strings.Repeat("x", sdk.MaxMessage) + `"}`, 1, sdk.CodeInvalid},
		{"path in slice", []string{"provision"}, `{"protocol":1,"slice":"../acme_main","data_dir":"` + filepath.ToSlash(root) + `"}`, 1, sdk.CodeInvalid},
		{"relative root", []string{"provision"}, `{"protocol":1,"slice":"acme_main","config":{"root":"rel"}}`, 1, sdk.CodeInvalid},
		{"provision", []string{"provision"}, req, 0, ""},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		cmd.Stdin = strings.NewReader(tt.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		exit := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			exit = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: run %s: %v", tt.name, bin, err)
		}
		if exit != tt.wantExit {
			t.Errorf("%s: exit %d; want %d (stderr %q)", tt.name, exit, tt.wantExit, stderr.String())
		}
		if tt.wantExit == 2 {
			if stdout.Len() != 0 || !strings.Contains(stderr.String(), "usage") {
				t.Errorf("%s: stdout %q, stderr %q; want no stdout and usage on stderr", tt.name, stdout.String(), stderr.String())
			}
			continue
		}
		if n := bytes.Count(stdout.Bytes(), []byte("\n")); n != 1 || !json.Valid(stdout.Bytes()) {
			t.Errorf("%s: stdout %q; want one JSON object and a newline", tt.name, stdout.String())
		}
		err = sdk.DecodeReply(bytes.TrimSpace(stdout.Bytes()), nil)
		if wantOK := tt.wantCode == ""; (err == nil) != wantOK || (!wantOK && sdk.CodeOf(err) != tt.wantCode) {
			t.Errorf("%s: reply %s; want ok %v, code %q", tt.name, stdout.String(), wantOK, tt.wantCode)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "acme_main")); err != nil || !fi.IsDir() {
		t.Errorf("after provision, %s/acme_main: %v; want a directory", root, err)
	}
	cmd := exec.Command(bin, "resolve")
	cmd.Stdin = strings.NewReader(req)
	out, err := cmd.Output()
	var res sdk.ResolveResponse
	if err != nil || sdk.DecodeReply(out, &res) != nil {
		t.Fatalf("resolve: %v, %s", err, out)
	}
	if want := "file://" + filepath.ToSlash(filepath.Join(root, "acme_main")); res.Address != want {
		t.Errorf("resolve address: got %s; want %s", res.Address, want)
	}
}
