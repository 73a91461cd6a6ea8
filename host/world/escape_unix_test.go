//go:build !windows

package world

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/internal/gittest"
	"golang.org/x/sys/unix"
)

// Issue 40 item 8: down gave escapees a fixed 10 s after SIGTERM; it gives
// them the world's longest stop_timeout and a small margin.
func TestEscapeGraceFollowsStopTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *config.Config
		want time.Duration
	}{
		{"stop_timeout 2s", &config.Config{Services: map[string]*config.Service{
			"api": {Name: "api", Cmd: "x", StopTimeout: 2 * time.Second},
			"db":  {Name: "db", Adapter: "postgres", StopTimeout: 30 * time.Second}, // a slice has no process
		}}, 2*time.Second + escapeMargin},
		{"the longest one", &config.Config{Services: map[string]*config.Service{
			"api": {Name: "api", Cmd: "x", StopTimeout: 2 * time.Second},
			"wkr": {Name: "wkr", Cmd: "y", StopTimeout: 5 * time.Second},
		}}, 5*time.Second + escapeMargin},
		{"no config to read", nil, config.DefaultStopTimeout + escapeMargin},
	} {
		if got := escapeGrace(tc.cfg); got != tc.want {
			t.Errorf("%s: escapeGrace = %v; want %v", tc.name, got, tc.want)
		}
	}
	if escapeMargin > 2*time.Second {
		t.Errorf("escapeMargin = %v; want a small margin", escapeMargin)
	}
}

// Issue 40 item 8: without cgroups (this fixture has none), a child that
// left its service's session with setsid and cleared its marker survived
// down, and nothing said so. down finds it by its parent, reports it and
// ends it.
func TestDownEndsEscapeeThatClearedItsMarker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process tree is read from /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("setsid is not installed (apt-get install util-linux): CI must have it")
		}
		t.Skip("setsid is not installed (apt-get install util-linux)")
	}
	gittest.Isolate(t)
	f := newFixture(t, `
[project]
name = "fx"
port_range = PORTRANGE

[services.spawner]
cmd          = "env -u BINKY_SERVICE setsid sleep 100931 </dev/null >/dev/null 2>&1 & exec sleep 100930"
stop_timeout = "1s"
`)
	ctx := context.Background()
	upFirst(t, f)
	var escapee int
	f.waitFor("the escapee to start", func() bool {
		out, _ := exec.Command("pgrep", "-x", "-f", "sleep 100931").Output()
		for _, w := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(w); err == nil {
				escapee = pid
			}
		}
		return escapee > 0
	})
	t.Cleanup(func() { syscall.Kill(escapee, syscall.SIGKILL) })
	if sid, _ := unix.Getsid(escapee); sid == f.pids()["spawner"] {
		t.Fatalf("the escapee %d is still in the service's session", escapee)
	}
	if _, err := f.down(ctx, api.DownArgs{WorldRef: f.ref()}); err != nil {
		t.Fatalf("down: %v\n%s", err, f.said)
	}
	if alive(escapee) {
		t.Errorf("pid %d, which left its session and cleared its marker, survived down\n%s", escapee, f.said)
	}
	if !strings.Contains(f.said, "cleared its marker: pid "+strconv.Itoa(escapee)) {
		t.Errorf("down did not report the escapee %d:\n%s", escapee, f.said)
	}
}
