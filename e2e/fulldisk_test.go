//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDaemonStartsOnFullDisk: the daemon of a home whose disk filled while
// it was stopped (worlds keep running) starts anyway: status shows the
// world re-adopted, says degraded and why; up and down are refused with
// that reason and change nothing; once space is freed the daemon leaves
// degraded mode without a restart and up works. The home is a small tmpfs
// filled to ENOSPC, which takes root: without it the test skips saying
// why, and under CI=true it fails.
//
// The service writes nothing: a service's output goes to its log file in
// the home, and what a program does when that write fails (python's
// http.server, logging a health probe, exits) is the program's own
// business, not the daemon's; the test is about the daemon.
func TestDaemonStartsOnFullDisk(t *testing.T) {
	e := newEnv(t, `
[project]
name = "fulldisk"
port_range = PORTRANGE

[services.web]
cmd = "exec sleep 100793"
`)
	filler := mountTmpfsHome(t, e, "32m")

	e.must("up", "-q", "one")
	pid := e.status().world(t, "one").service(t, "web").Pid
	if pid <= 0 || !alive(pid) {
		t.Fatalf("web of world one runs as pid %d; want a live process", pid)
	}
	e.must("daemon", "stop") // the world keeps running
	fillFile(t, filler)

	// Any verb starts the daemon again, on the full disk.
	st := degradedStatus(t, e)
	want := "binky's home " + e.home + " is on a full disk (no space left on device); the daemon supervises running worlds but refuses new work until space is freed"
	if st.Degraded == nil || st.Degraded.Reason != want {
		t.Fatalf("status --json on a full disk: degraded = %+v; want the reason %q\ndaemon log:\n%s", st.Degraded, want, e.daemonLog())
	}
	web := statusJSON{Worlds: st.Worlds}.world(t, "one").service(t, "web")
	if web.Pid != pid || web.State != "running" {
		t.Errorf("web after the restart on a full disk: pid %d, %s; want pid %d re-adopted, running", web.Pid, web.State, pid)
	}
	if out := e.must("status").stdout; !strings.HasPrefix(out, "degraded: "+want) {
		t.Errorf("binky status does not begin with the degraded reason:\n%s", out)
	}

	for _, verb := range [][]string{{"up", "two"}, {"down", "one"}} {
		r := e.binky(verb...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("binky %s on a full disk: exit %d, stderr:\n%s\nwant a refusal saying %q", strings.Join(verb, " "), r.code, r.stderr, want)
		}
	}
	if !alive(pid) {
		t.Errorf("web (pid %d) ended while the disk was full\ndaemon log:\n%s", pid, e.daemonLog())
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.must("up", "-q", "two") // the daemon checks again, and serves it
	after := e.status()
	for _, w := range []string{"one", "two"} {
		if s := after.world(t, w).service(t, "web"); s.State != "running" {
			t.Errorf("web of world %s is %s once space is freed; want running", w, s.State)
		}
	}
	if st := degradedStatus(t, e); st.Degraded != nil {
		t.Errorf("status still says degraded once space is freed: %+v", st.Degraded)
	}
}

// fullDiskStatus is `binky status --json` with its degraded field.
type fullDiskStatus struct {
	Worlds   []worldJSON `json:"worlds"`
	Degraded *struct {
		Reason string    `json:"reason"`
		Since  time.Time `json:"since"`
	} `json:"degraded"`
}

func degradedStatus(t *testing.T, e *env) fullDiskStatus {
	t.Helper()
	r := e.must("status", "--json")
	var st fullDiskStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return st
}

// mountTmpfsHome mounts a tmpfs of size as e's home and returns the path of
// a file that may fill it. At cleanup it frees the space, removes the
// worlds and stops the daemon (env.cleanup), then unmounts.
func mountTmpfsHome(t *testing.T, e *env, size string) (filler string) {
	t.Helper()
	need := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs a tmpfs home it can fill: %s", why)
		}
		t.Skipf("skipped: this test needs a tmpfs home it can fill: %s", why)
	}
	if os.Geteuid() != 0 {
		need("mounting one takes root")
	}
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", e.home).CombinedOutput(); err != nil {
		need("mount: " + err.Error() + ": " + string(bytes.TrimSpace(out)))
	}
	filler = filepath.Join(e.home, "filler")
	t.Cleanup(func() {
		if err := os.Remove(filler); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("free the home: %v", err)
		}
		e.cleanup()
		// The daemon stopped; its last file handles close as it exits,
		// which a loaded machine may take a moment to finish. Whatever
		// still holds the home after that is a leak, and is named.
		var out []byte
		var err error
		for range 100 {
			if out, err = exec.Command("umount", e.home).CombinedOutput(); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		holders, _ := exec.Command("fuser", "-vm", e.home).CombinedOutput()
		t.Errorf("umount %s: %v: %s\nholders:\n%s", e.home, err, out, holders)
		exec.Command("umount", "-l", e.home).Run()
	})
	return filler
}

// fillFile writes path until its file system has no space left.
func fillFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			return
		}
	}
}
