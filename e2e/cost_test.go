package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// topJSON is one reading of `binky top --json`.
type topJSON struct {
	Worlds []struct {
		Project  string `json:"project"`
		Worktree string `json:"worktree"`
		State    string `json:"state"`
		Cost     struct {
			Source    string  `json:"source"`
			Processes int     `json:"processes"`
			RSS       int64   `json:"rss_bytes"`
			CPUPct    float64 `json:"cpu_percent"`
			Disk      *struct {
				Untracked int64 `json:"untracked_bytes"`
				Ignored   int64 `json:"ignored_bytes"`
			} `json:"disk"`
			Slices []struct {
				Service string `json:"service"`
				Adapter string `json:"adapter"`
				Bytes   int64  `json:"bytes"`
				Error   string `json:"error"`
				Unsup   bool   `json:"unsupported"`
				Note    string `json:"note"`
			} `json:"slices"`
		} `json:"cost"`
	} `json:"worlds"`
}

// TestTopOnceJSON: `binky top --once --json` prints one reading of every
// world, the most memory first: a running world's processes weigh
// something, a stopped one's nothing, and the running world's sqlite
// slice is the size of its database file (within a quarter: SQLite's WAL
// may move between the two looks).
func TestTopOnceJSON(t *testing.T) {
	e := newEnv(t, demoConfig)
	e.must("up", "feat/a")
	e.must("up", "feat/b")
	e.must("down", "feat/b")

	var top topJSON
	waitFor(t, "top to report feat/a's slice size", func() bool {
		r := e.must("top", "--once", "--json")
		if n := strings.Count(strings.TrimSpace(r.stdout), "\n"); n != 0 {
			t.Fatalf("top --once --json printed %d lines; want one:\n%s", n+1, r.stdout)
		}
		top = topJSON{}
		if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
			t.Fatalf("top --json: %v\n%s", err, r.stdout)
		}
		return len(top.Worlds) == 2 && len(top.Worlds[0].Cost.Slices) == 1 && top.Worlds[0].Cost.Disk != nil
	})
	a, b := top.Worlds[0], top.Worlds[1]
	if a.Worktree != "feat-a" || b.Worktree != "feat-b" {
		t.Fatalf("order = %s, %s; want feat-a (running) before feat-b (down)", a.Worktree, b.Worktree)
	}
	if a.Cost.Processes < 2 || a.Cost.RSS <= 0 {
		t.Errorf("feat-a: %d processes, %d bytes resident; want at least 2 (api, worker), > 0", a.Cost.Processes, a.Cost.RSS)
	}
	if b.Cost.Processes != 0 || b.Cost.RSS != 0 {
		t.Errorf("feat-b (down): %d processes, %d bytes; want none", b.Cost.Processes, b.Cost.RSS)
	}
	if a.Cost.CPUPct < 0 {
		t.Errorf("feat-a: cpu_percent = %v; want a reading (top --once reads twice)", a.Cost.CPUPct)
	}
	s := a.Cost.Slices[0]
	if s.Service != "db" || s.Adapter != "sqlite" || s.Error != "" || s.Unsup {
		t.Fatalf("feat-a slice = %+v; want db by sqlite, measured", s)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "data", "sqlite", e.project, "*feat*a*.db*"))
	var want int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !strings.HasSuffix(f, ".binky-owner") {
			want += fi.Size()
		}
	}
	if want == 0 || s.Bytes < want*3/4 || s.Bytes > want*5/4 {
		t.Errorf("feat-a slice = %d bytes; want about %d (its files %v)", s.Bytes, want, files)
	}
}
