package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// TestSummariesShowDirtyDirectAndNoPorts: the one-line summaries carry a
// dirty tree, the direct addresses, a world that is down, and no
// "ports 0-0" for a world without ports.
func TestSummariesShowDirtyDirectAndNoPorts(t *testing.T) {
	now := time.Now()
	st := statusSummary(api.StatusResult{Worlds: []api.World{{Project: "p", Worktree: "a", State: "up",
		Verify: &api.Verify{Passed: true, Commit: "abcdef123456", Dirty: true, At: now}}}}, now)
	if !strings.Contains(st, "at abcdef12+dirty") {
		t.Errorf("status summary %q; want abcdef12+dirty", st)
	}
	st = statusSummary(api.StatusResult{Worlds: []api.World{{Project: "p", Worktree: "a", State: "up",
		Cost: &api.Cost{RSS: 64 << 20, CPUPercent: 2, Disk: &api.DiskCost{Ignored: 12 << 20},
			Slices: []api.SliceCost{{Service: "cache", Bytes: 3 << 20, Approximate: true}}, SliceBytes: 3 << 20}}}}, now)
	if !strings.Contains(st, "{memory 64 MiB, cpu 2%, disk 12 MiB, slices ~3 MiB}") {
		t.Errorf("status summary %q; want the world's cost", st)
	}
	if v := verifySummary(VerifyResult{Worktree: "a", Passed: true, Commit: "abcdef123456", Dirty: true}); !strings.Contains(v, "abcdef12+dirty") {
		t.Errorf("verify summary %q; want abcdef12+dirty", v)
	}
	three := 3
	if v := verifySummary(VerifyResult{Worktree: "a", Passed: true, BrowserErrors: &three}); !strings.Contains(v, "the pages reported 3 browser errors since up (browser_logs tool)") {
		t.Errorf("verify summary %q; want the browser errors counted", v)
	}
	if u := upSummary(api.World{Project: "p", Worktree: "a"}, time.Second); strings.Contains(u, "0-0") || !strings.Contains(u, "no ports") {
		t.Errorf("up summary %q; want no ports", u)
	}
	e := envSummary(EnvResult{Project: "p", Worktree: "a", State: "down",
		Env:    map[string]string{"api": "http://api.a.p.localhost:7355"},
		Direct: map[string]string{"api": "http://127.0.0.1:41000"}}, []string{"api"})
	if !strings.Contains(e, "api=http://127.0.0.1:41000") || !strings.Contains(e, "the world is down") {
		t.Errorf("env summary %q; want the direct address and a down warning", e)
	}
}

// The status summary says why a world is degraded and what each troubled
// service's reason is.
func TestStatusSummarySaysWhy(t *testing.T) {
	st := statusSummary(api.StatusResult{Worlds: []api.World{{Project: "p", Worktree: "a", State: "degraded", Reason: "web unhealthy",
		Services: []api.Service{{Name: "web", State: "unhealthy", Reason: "unhealthy: http://127.0.0.1:4101/healthz: 503 for 40s"}, {Name: "db", State: "running"}}}}}, time.Now())
	for _, want := range []string{"p/a degraded", "why: web unhealthy", "[web: unhealthy: http://127.0.0.1:4101/healthz: 503 for 40s]"} {
		if !strings.Contains(st, want) {
			t.Errorf("status summary %q lacks %q", st, want)
		}
	}
	if strings.Contains(st, "db:") {
		t.Errorf("status summary %q names a running service", st)
	}
}

// A service in backoff: the summary quotes the last line of its log (the
// crash's cause), not only its state (issue 40).
func TestStatusSummaryQuotesCrash(t *testing.T) {
	st := statusSummary(api.StatusResult{Worlds: []api.World{{Project: "p", Worktree: "a", State: "failed", Reason: "worker backoff",
		Services: []api.Service{{Name: "worker", State: "backoff", Reason: "backoff: exit status 1",
			LogTail: []string{"starting", "invalid boolean value for key METRICS_COLLECTOR"}}}}}}, time.Now())
	if want := "[worker: backoff: exit status 1; its log ends: invalid boolean value for key METRICS_COLLECTOR]"; !strings.Contains(st, want) {
		t.Errorf("status summary %q lacks %q", st, want)
	}
}

// TestStatusRemoteWorlds: the status tool's result carries another
// host's worlds reached from here (structured, in remote, with their
// host) and its summary names them with their host and local URLs.
func TestStatusRemoteWorlds(t *testing.T) {
	rw := api.World{Project: "far", Worktree: "feat", State: "up", Host: "box",
		Services: []api.Service{{Name: "web", Kind: "cmd", State: "running", URL: "https://web.feat.far.localhost:7443"}}}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpStatus: func(_ any, _ api.Handlers, out any) error {
			return setResult(api.StatusResult{Worlds: []api.World{{Project: "p", Worktree: "a", State: "up"}}, Remote: []api.World{rw}}, out)
		},
	}}
	s := startSession(t, d)
	defer s.close()
	r, _ := s.call("status", nil, nil)
	if r.IsError {
		t.Fatalf("status: %q", r.Content[0].Text)
	}
	text := r.Content[0].Text
	for _, want := range []string{"p/a up", "far/feat up on host box (web https://web.feat.far.localhost:7443)"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q: %q", want, text)
		}
	}
	var out StatusResult
	if err := json.Unmarshal(r.Structured, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Remote) != 1 || out.Remote[0].Host != "box" || out.Remote[0].Services[0].URL != rw.Services[0].URL || len(out.Worlds) != 1 {
		t.Errorf("structured: %+v", out.StatusResult)
	}
	// Only remote worlds: not "no worlds yet".
	if st := statusSummary(api.StatusResult{Remote: []api.World{rw}}, time.Now()); strings.Contains(st, "no worlds yet") || !strings.Contains(st, "on host box") {
		t.Errorf("only remote worlds: %q", st)
	}
}
