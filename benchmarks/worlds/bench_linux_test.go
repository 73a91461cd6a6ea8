//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testAdmin = "postgres://postgres@127.0.0.1:5432/postgres"

// needServers skips (fails under CI=true) when what the benchmark drives is
// missing, and answers the directory holding binky and its adapter.
func needServers(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the worlds benchmark starts PostgreSQL servers: not in -short")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		missing("run as root: the benchmark runs initdb as the postgres user and reads the shared server's memory")
	}
	if _, err := findPgTools(""); err != nil {
		missing("%v (Debian: apt-get install postgresql)", err)
	}
	psql := lookPath("psql", "")
	if psql == "" {
		missing("psql is not on PATH (apt-get install postgresql-client)")
	}
	if out, err := exec.Command(psql, "-X", "-d", testAdmin, "-Atc", "SELECT 1").CombinedOutput(); err != nil {
		missing("PostgreSQL at %s is not answering (start it: pg_ctlcluster 15 main start): %v %s", testAdmin, err, out)
	}
	if dir := os.Getenv("BINKY_TEST_BIN"); dir != "" && exists(filepath.Join(dir, "binky-adapter-postgres")) {
		return dir
	}
	dir := t.TempDir()
	if err := buildBinky(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ownTempDir points TMPDIR (where the benchmark makes its work directory)
// at a directory of this test's, so leftovers sees this run's work only:
// with the machine's /tmp, another run of these tests at the same time (a
// second checkout, another session) showed up as "left behind". Mode 0755:
// initdb runs as the postgres user under it.
func ownTempDir(t *testing.T) {
	t.Helper()
	dir, err := os.MkdirTemp("", "binky-worlds-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
}

// leftovers lists what a run may leave behind: work directories, processes
// running from them, and databases of the project.
func leftovers(t *testing.T, project string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "binky-worlds-*"))
	out := dirs
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(filepath.Join(os.TempDir(), "binky-worlds-"))) {
			out = append(out, "process "+p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	if project != "" {
		b, err := exec.Command(lookPath("psql", ""), "-X", "-d", testAdmin, "-Atc", "SELECT datname FROM pg_database").Output()
		if err != nil {
			t.Fatalf("list databases: %v", err)
		}
		for _, db := range strings.Fields(string(b)) {
			if strings.HasPrefix(db, project+"_") {
				out = append(out, "database "+db)
			}
		}
	}
	return out
}

func TestSmallSweep(t *testing.T) {
	bin := needServers(t)
	ownTempDir(t)
	before := leftovers(t, "")
	var stdout, stderr bytes.Buffer
	o := options{sweep: []int{1, 2}, rows: 500, arms: []string{"a", "b"}, adminURL: testAdmin, binDir: bin, json: true}
	if err := benchmark(t.Context(), o, nil, &stdout, &stderr); err != nil {
		t.Fatalf("benchmark: %v\n%s", err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, stdout.String())
	}
	if !r.Complete || len(r.Arms) != 2 || r.Targets == nil || r.Targets.N != 2 {
		t.Fatalf("report complete %v, %d arms, targets %+v; want complete, 2 arms, targets for N=2", r.Complete, len(r.Arms), r.Targets)
	}
	for _, a := range r.Arms {
		if len(a.Worlds) != 2 {
			t.Fatalf("arm %s: %d worlds; want 2", a.Arm, len(a.Worlds))
		}
		for _, w := range a.Worlds {
			if w.Seconds <= 0 || w.PSSMiB <= 0 || w.Processes < 1 {
				t.Errorf("arm %s world %d: %+v; want time, memory and processes measured", a.Arm, w.N, w)
			}
		}
	}
	a, b := r.Arms[0], r.Arms[1]
	if a.Worlds[1].Processes <= a.Worlds[0].Processes {
		t.Errorf("arm A: %d processes with 2 servers, %d with 1; want more with 2", a.Worlds[1].Processes, a.Worlds[0].Processes)
	}
	if !strings.Contains(b.Notes, "golden_built ×1") || !strings.Contains(b.Notes, "cloned") || strings.Contains(b.Notes, "clone_fallback") {
		t.Errorf("arm B notes %q; want one golden build and clones, no fallback", b.Notes)
	}
	if after := leftovers(t, b.Project); len(after) > len(before) {
		t.Errorf("left behind: %v (before: %v)", after, before)
	}
}

// cancelOn cancels when a progress line contains a marker.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestInterruptCleansUp stops a run as Ctrl-C would, while arm B has a world
// up and is making the next: nothing may stay behind. Arm B alone: arm A is
// taken down before B starts (its cleanup is TestSmallSweep's), and its
// private servers were half of this test's time.
func TestInterruptCleansUp(t *testing.T) {
	bin := needServers(t)
	ownTempDir(t)
	before := leftovers(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := &cancelOn{marker: "arm B world 1:", cancel: cancel}
	var stdout bytes.Buffer
	o := options{sweep: []int{3}, rows: 500, arms: []string{"b"}, adminURL: testAdmin, binDir: bin, json: true, settle: 100 * time.Millisecond}
	err := benchmark(ctx, o, nil, &stdout, progress)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("benchmark after cancel: %v; want context.Canceled\n%s", err, progress.buf.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, stdout.String())
	}
	if r.Complete || len(r.Arms) != 1 || r.Arms[0].Project == "" {
		t.Fatalf("report complete %v with %d arms; want an incomplete report naming arm B's project", r.Complete, len(r.Arms))
	}
	after := leftovers(t, r.Arms[0].Project)
	for _, l := range after {
		if !slices.Contains(before, l) {
			t.Errorf("left behind: %s", l)
		}
	}
}
