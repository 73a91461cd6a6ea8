package doctor

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Status is how a finding stands.
type Status string

// Statuses, from fine to wrong. Only StatusFail makes binky doctor exit
// non-zero.
const (
	StatusOK   Status = "ok"
	StatusSkip Status = "skip"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Finding is one result of one check.
type Finding struct {
	Check   string `json:"check"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	// Fix is the one command (or edit) that fixes it; empty when fine.
	Fix string `json:"fix,omitempty"`
}

// Env is what the checks look at.
type Env struct {
	// Home is BINKY_HOME.
	Home string
	// Version is the CLI's version, compared with the daemon's.
	Version string
	// PathEnv is the PATH adapters are discovered on (empty: this
	// process's).
	PathEnv string
	// GOOS selects the OS-specific fixes (runtime.GOOS when empty).
	GOOS string
	// CheckTimeout bounds each check (default 20s).
	CheckTimeout time.Duration
	// LeaseDir is the machine-wide port lease directory (empty:
	// ports.DefaultLeaseDir()).
	LeaseDir string
}

// check is one entry of the table Run walks.
type check struct {
	name string
	run  func(ctx context.Context, e *Env) []Finding
}

// checks is every check, in the order they are printed.
var checks = []check{
	{"daemon", checkDaemon},
	{"job", checkJob},
	{"registry", checkRegistry},
	{"adapters", checkAdapters},
	{"adapter-paths", checkAdapterPaths},
	{"git", checkGit},
	{"localhost", checkLocalhost},
	{"apex", checkApex},
	{"ca", checkCA},
	{"ports", checkPorts},
	{"ephemeral-ports", checkEphemeral},
	{"leases", checkLeases},
	{"exposed", checkExposed},
	{"logs", checkLogs},
	{"resources", checkResources},
	{"golden", checkGolden},
	{"copy-on-write", checkCopyOnWrite},
	{"worktrees", checkWorktrees},
}

// Names lists the checks Run runs.
func Names() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.name
	}
	return out
}

// Run runs every check in parallel, each bounded by CheckTimeout, and
// returns their findings in table order. A check that does not finish in
// time is a failure naming it.
func Run(ctx context.Context, e Env) []Finding {
	if e.GOOS == "" {
		e.GOOS = runtime.GOOS
	}
	if e.CheckTimeout <= 0 {
		e.CheckTimeout = 20 * time.Second
	}
	results := make([][]Finding, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, e.CheckTimeout)
			defer cancel()
			done := make(chan []Finding, 1)
			go func() { done <- c.run(cctx, &e) }()
			select {
			case fs := <-done:
				results[i] = fs
			case <-cctx.Done():
				results[i] = []Finding{{Check: c.name, Status: StatusFail,
					Message: "the check did not finish in " + e.CheckTimeout.String(),
					Fix:     "binky doctor --json, then report it with the output"}}
			}
		}()
	}
	wg.Wait()
	var out []Finding
	for i, fs := range results {
		for _, f := range fs {
			if f.Check == "" {
				f.Check = checks[i].name
			}
			out = append(out, f)
		}
	}
	return out
}

// Failed reports whether any finding is a failure.
func Failed(fs []Finding) bool {
	for _, f := range fs {
		if f.Status == StatusFail {
			return true
		}
	}
	return false
}

func ok(format string, args ...any) Finding {
	return Finding{Status: StatusOK, Message: sprintf(format, args...)}
}

func warn(fix, format string, args ...any) Finding {
	return Finding{Status: StatusWarn, Message: sprintf(format, args...), Fix: fix}
}

func fail(fix, format string, args ...any) Finding {
	return Finding{Status: StatusFail, Message: sprintf(format, args...), Fix: fix}
}

func skip(format string, args ...any) Finding {
	return Finding{Status: StatusSkip, Message: sprintf(format, args...)}
}
