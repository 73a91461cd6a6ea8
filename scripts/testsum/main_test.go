package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testdata/probe.json is `go test -json` of packages that pass, skip (with
// a two-line reason), fail in a subtest, fail to build and fail in
// TestMain, then hand-written events: a test cut off by a timeout, a
// package without tests, a quiet pass and a line that is not JSON.
func readProbe(t *testing.T) (Record, string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "probe.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	c := newCollector(&out, "plugins/probe", false)
	c.read(f)
	return c.finish(-1, 1500*time.Millisecond), out.String()
}

func TestCounts(t *testing.T) {
	rec, _ := readProbe(t)
	// Passed: TestPass, TestSub/one, FuzzF/seed#0, TestOK. Failed:
	// TestSub/two (its parent is not counted again), the build, TestMain,
	// TestHang. Skipped: TestSkip, TestSub/three.
	if got := rec.counts(); got != "4 passed, 4 failed, 2 skipped" {
		t.Errorf("counts: %s; want 4 passed, 4 failed, 2 skipped", got)
	}
	wantSkips := []Case{
		{Package: "probe/a", Test: "TestSkip", Reason: "no server on 127.0.0.1:5432; start it"},
		{Package: "probe/a", Test: "TestSub/three", Reason: "later"},
	}
	if !reflect.DeepEqual(rec.Skips, wantSkips) {
		t.Errorf("skips: %+v; want %+v", rec.Skips, wantSkips)
	}
	var fails []string
	for _, f := range rec.Fails {
		fails = append(fails, f.Package+" "+f.Test+" "+f.Reason)
	}
	want := []string{
		"probe/b  build failed",
		"probe/c  the test binary failed outside any test (TestMain, init or a panic)",
		"probe/a TestSub/two ",
		"probe/d TestHang ",
	}
	if !reflect.DeepEqual(fails, want) {
		t.Errorf("fails:\n%s\nwant:\n%s", strings.Join(fails, "\n"), strings.Join(want, "\n"))
	}
	if !rec.failed() {
		t.Error("failed() = false; want true")
	}
}

func TestOutputShowsFailuresOnly(t *testing.T) {
	_, out := readProbe(t)
	for _, want := range []string{
		"b/b_test.go:3:33: undefined: undefined", // the build error
		"setup failed",                           // TestMain's output
		"--- FAIL: TestSub (0.00s)\n    --- FAIL: TestSub/two (0.00s)\n        a_test.go:7: boom 2\n",
		"--- FAIL: TestHang (did not finish)\npanic: test timed out after 1s\n",
		"panic: test timed out after 1s",
		"ok  \tprobe/f\t2.500s\n",
		"go: a line that is not JSON\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, quiet := range []string{"quiet when it passes", "a_test.go:3: hello", "=== RUN", "no test files", "PASS\n"} {
		if strings.Contains(out, quiet) {
			t.Errorf("output shows %q, which passed:\n%s", quiet, out)
		}
	}
}

func TestExitStatusWithoutFailureCounts(t *testing.T) {
	// A package whose output stops is a failure; the exit status adds none.
	c := newCollector(&strings.Builder{}, "sdk", false)
	c.read(strings.NewReader(`{"Action":"start","Package":"x"}` + "\n" + `{"Action":"run","Package":"x","Test":"TestA"}` + "\n"))
	if rec := c.finish(2, time.Second); rec.counts() != "0 passed, 1 failed, 0 skipped" {
		t.Errorf("TestA cut off, exit status 2: %s; want 1 failed", rec.counts())
	}
	// Exit status 1 with nothing failed in the output (a bad flag, go vet
	// in go test) is one failure.
	c = newCollector(&strings.Builder{}, "sdk", false)
	c.read(strings.NewReader("flag provided but not defined: -x\n"))
	if rec := c.finish(1, time.Second); rec.counts() != "0 passed, 1 failed, 0 skipped" || !rec.failed() {
		t.Errorf("exit status 1 and no output: %s; want 1 failed", rec.counts())
	}
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	rec, _ := readProbe(t)
	ok := Record{Module: ".", Seconds: 61.25, ExitCode: 0, Passed: 10, Skipped: 1,
		Skips:    []Case{{Package: "example.com/m/a", Test: "TestDB", Reason: "PostgreSQL is not running"}},
		Packages: []PackageTime{{Package: "example.com/m/a", Seconds: 60, Result: "ok"}}}
	var paths []string
	for i, r := range []Record{ok, rec} {
		b, _ := json.Marshal(r)
		p := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out strings.Builder
	if status := summarize(&out, paths); status != 1 {
		t.Errorf("status %d; want 1 (a module failed)", status)
	}
	for _, want := range []string{
		"ok    . (root)         61.2s  10 passed, 0 failed, 1 skipped\n",
		"FAIL  plugins/probe     1.5s  4 passed, 4 failed, 2 skipped\n",
		"FAIL  total            62.8s  14 passed, 4 failed, 3 skipped\n",
		"skipped (3):\n",
		"  probe/a TestSkip: no server on 127.0.0.1:5432; start it\n",
		"  probe/b: build failed\n",
		"    60.0s  example.com/m/a\n",
		"slowest tests (parallel tests overlap):\n     2.4s  probe/f TestOK\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
