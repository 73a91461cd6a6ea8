//go:build !windows

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoDownSaysWhatItDid (issue 40): `make demo-down` removes the demo
// worlds and stops the daemon; it does not print the daemon stop's
// "worlds keep running" right after removing them.
func TestDemoDownSaysWhatItDid(t *testing.T) {
	e := newEnv(t, `
[project]
name = "demo"
port_range = PORTRANGE

[services.api]
cmd = "exec sleep 600"
`)
	e.must("up", "-q", "demo/alpha") // a running daemon and a demo world
	base := filepath.Dir(e.home)     // demo.sh keeps its home in $BINKY_DEMO_DIR/home
	script, err := filepath.Abs(filepath.Join("..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, "down")
	cmd.Dir = e.repo
	cmd.Env = append(e.environ(), "BINKY_DEMO_DIR="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh down: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "keep running") || !strings.Contains(string(out), "demo removed") {
		t.Errorf("demo.sh down printed %q; want that the demo is removed, no worlds kept running", out)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("the demo's home is still there: %v", err)
	}
}
