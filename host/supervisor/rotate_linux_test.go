//go:build linux

package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLogRotationAtFiveMiB runs a service five times; each run writes 5.5 MB
// of numbered lines, so each restart rolls the log. Four runs' output is kept
// (the current file and three generations), in order, without a gap.
func TestLogRotationAtFiveMiB(t *testing.T) {
	t.Parallel()
	const perRun = 500000 // 11-byte lines: 5.5 MB, past LogRollSize
	w := newWorld(t)
	rec := newRecorder()
	// The keeper would roll the log while a run writes: this test is of
	// the roll at restart.
	s := newSup(t, rec, Options{Logs: LogOptions{CheckEvery: time.Hour}})
	spec := w.spec("api", fmt.Sprintf(`n=$(( $(cat n 2>/dev/null || echo 0) + 1 )); echo $n > n; seq -f '%%010.0f' $(( (n-1)*%d + 1 )) $(( n*%d ))`, perRun, perRun))
	spec.Restart = RestartNever
	for run := 1; run <= 5; run++ {
		if err := s.Start(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
		rec.waitEvent(t, EventExited, spec.Key, run)
	}
	for _, g := range []string{".1", ".2", ".3"} {
		fi, err := os.Stat(spec.LogPath + g)
		if err != nil || fi.Size() != perRun*11 {
			t.Errorf("generation %s: %v, %v; want %d bytes", g, fi, err, perRun*11)
		}
	}
	if _, err := os.Stat(spec.LogPath + ".4"); err == nil {
		t.Errorf("a fourth generation exists")
	}
	all, err := ReadLogs(spec.LogPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	var nums []string
	for _, l := range all {
		if !strings.HasPrefix(l, LinePrefix) {
			nums = append(nums, l)
		}
	}
	if len(nums) != 4*perRun {
		t.Fatalf("lines kept = %d; want %d", len(nums), 4*perRun)
	}
	for i, l := range nums {
		if want := fmt.Sprintf("%010d", perRun+1+i); l != want {
			t.Fatalf("line %d = %q; want %q (lost or reordered)", i, l, want)
		}
	}
	tail, err := ReadLogs(spec.LogPath, 3)
	if err != nil || strings.Join(tail, " ") != "0002499998 0002499999 0002500000" {
		t.Errorf("ReadLogs(3) = %q, %v", tail, err)
	}
}

// TestLogRollsWhileRunning (issue 40): a service writing numbered lines
// without pause, never restarted, past the bound: the keeper rolls its log
// in place, three generations are kept, the current file stays bounded,
// and inside each file no line is missing; across a roll at most the
// documented window (a write racing the truncate) is lost.
func TestLogRollsWhileRunning(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{Logs: LogOptions{RollSize: bound, CheckEvery: 20 * time.Millisecond}})
	// The test binary writes the lines (TestHelperLines): one write per
	// line, so a roll never splits one, at a pace that neither waits on
	// the machine's fork rate (a shell's $(…) per line wrote 300 lines a
	// second on a busy VM, too few to roll in time) nor outruns the
	// keeper's checks.
	spec := w.spec("api", `exec "$BINKY_SUP_TEST_BIN" -test.run='^TestHelperLines$'`)
	spec.Env = append(spec.Env, "BINKY_SUP_TEST_BIN="+os.Args[0], "BINKY_SUP_LINES=1")
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	var oldest os.FileInfo
	rec.until(t, "the oldest generation dropped and replaced", func() bool {
		fi, err := os.Stat(spec.LogPath + ".3")
		switch {
		case err != nil:
			return false
		case oldest == nil:
			oldest = fi
			return false
		}
		return !os.SameFile(fi, oldest)
	})
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spec.LogPath + ".4"); err == nil {
		t.Errorf("a fourth generation exists")
	}
	for _, f := range LogFiles(spec.LogPath) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatalf("generation %s: %v", f, err)
		}
		if fi.Size() > 8*bound {
			t.Errorf("%s holds %d bytes; want it bounded near %d", f, fi.Size(), bound)
		}
	}
	prev := 0
	for _, f := range LogFiles(spec.LogPath) {
		ls, err := tailFile(f, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		first := true
		for _, l := range ls {
			if strings.HasPrefix(l, LinePrefix) {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(l, "%d", &n); err != nil || len(l) != 10 {
				t.Fatalf("%s: line %q is not whole", f, l)
			}
			switch {
			case prev == 0:
			case first && n > prev && n-prev <= 200: // a roll: the window, a few lines at most
			case n != prev+1:
				t.Fatalf("%s: line %d follows %d: lost or reordered", f, n, prev)
			}
			prev, first = n, false
		}
	}
	// Every line has a time, and the log's lines are in time order.
	all, err := ReadLogLines(spec.LogPath, 0, time.Time{})
	if err != nil || len(all) == 0 {
		t.Fatalf("ReadLogLines: %d lines, %v", len(all), err)
	}
	for i, l := range all {
		if l.Time.IsZero() || (i > 0 && l.Time.Before(all[i-1].Time)) {
			t.Fatalf("line %d (%q) dated %v after %v", i, l.Text, l.Time, all[i-1].Time)
		}
	}
}

// TestHelperLines is the service of TestLogRollsWhileRunning: numbered
// 10-digit lines on stdout, one write each, five at a time with a
// millisecond's pause (at most about 5,000 a second), until it is
// stopped.
func TestHelperLines(t *testing.T) {
	if os.Getenv("BINKY_SUP_LINES") == "" {
		t.Skip("helper process for TestLogRollsWhileRunning")
	}
	for i := 1; ; i++ {
		if _, err := fmt.Fprintf(os.Stdout, "%010d\n", i); err != nil {
			os.Exit(1)
		}
		if i%5 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}
