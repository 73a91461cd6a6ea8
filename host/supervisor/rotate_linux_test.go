//go:build linux

package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLogRotationAtFiveMiB runs a service five times; each run writes 5.5 MB
// of numbered lines, so each restart rolls the log. Four runs' output is kept
// (the current file and three generations), in order, without a gap.
func TestLogRotationAtFiveMiB(t *testing.T) {
	t.Parallel()
	const perRun = 500000 // 11-byte lines: 5.5 MB, past LogRollSize
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
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
