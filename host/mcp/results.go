package mcp

import (
	"errors"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
)

// EnvResult is the env tool's structured result: the world's expose set as
// `binky env` prints it (Env), and the same values under the variable names
// verify commands see (Variables, BINKY_<SERVICE>_URL).
//
// Direct holds http://127.0.0.1:<port> for each exposed service with a
// port: the same service without the proxy, for a client whose resolver
// does not map *.localhost names to loopback (docs/proxy.md).
type EnvResult struct {
	Project   string            `json:"project"`
	Worktree  string            `json:"worktree"`
	State     state.World       `json:"state,omitempty"`
	Env       map[string]string `json:"env"`
	Direct    map[string]string `json:"direct,omitempty"`
	Variables map[string]string `json:"variables"`
	// NotRunning names each exposed service that does not run in an up
	// world, with why ("not in profile frontend"): it has no address here.
	NotRunning map[string]string `json:"not_running,omitempty"`
	// Waiting names each exposed wake service that does not run yet
	// ("starts on its first request"): its URL is in Env and a request
	// to it starts it; it has no Direct address until then.
	Waiting map[string]string `json:"waiting,omitempty"`
	// StableName is the name of [project] stable_names the world holds (in
	// place of its worktree name in its hostnames); "" when none.
	StableName string `json:"stable_name,omitempty"`
}

// VerifyResult is the verify tool's structured result: the recorded run, and
// for each check the tail of its output.
type VerifyResult struct {
	Worktree string        `json:"worktree"`
	Passed   bool          `json:"passed"`
	Commit   string        `json:"commit"`
	Dirty    bool          `json:"dirty"`
	At       time.Time     `json:"at"`
	Duration int64         `json:"duration_ms"`
	Checks   []CheckResult `json:"checks"`
	// Error is the daemon's account of a failed run, naming the failed checks.
	Error string `json:"error,omitempty"`
	// BrowserErrors is how many errors the world's pages reported since
	// its last up ([agents] browser_logs); absent without browser logs.
	BrowserErrors *int `json:"browser_errors,omitempty"`
}

// CheckResult is one verify command's outcome with the tail of its output
// (stdout and stderr interleaved as they arrived).
type CheckResult struct {
	Cmd        string `json:"cmd"`
	ExitCode   int    `json:"exit_code"`
	Duration   int64  `json:"duration_ms"`
	Passed     bool   `json:"passed"`
	OutputTail string `json:"output_tail"`
	// Truncated says OutputTail is only the end of a longer output.
	Truncated bool `json:"truncated,omitempty"`
}

// ErrorResult is the structured content of a failed tool call.
type ErrorResult struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo says what failed: Code is the daemon's class (invalid,
// not_found, conflict, failed, internal) or "unavailable" when the daemon
// could not be reached.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// codeUnavailable classifies failures that never reached a daemon answer.
const codeUnavailable = "unavailable"

// errorResult turns a failed daemon call into a tool error an agent reads.
func errorResult(tool string, err error) *mcpgo.CallToolResult {
	info := ErrorInfo{Code: codeUnavailable, Message: err.Error()}
	var ae *api.Error
	if errors.As(err, &ae) {
		info = ErrorInfo{Code: ae.Code, Message: ae.Message}
	}
	return result(fmt.Sprintf("%s failed: %s", tool, oneLine(info.Message)), ErrorResult{Error: info}, true)
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		rest := strings.Fields(s[i+1:])
		s = s[:i] + " " + strings.Join(rest, " ")
	}
	return s
}

func shortCommit(c string) string {
	c = strings.TrimSpace(c)
	if len(c) > 8 {
		return c[:8]
	}
	if c == "" {
		return "no commit"
	}
	return c
}

// commitLabel is shortCommit, with +dirty when the tree had uncommitted
// changes.
func commitLabel(commit string, dirty bool) string {
	if dirty {
		return shortCommit(commit) + "+dirty"
	}
	return shortCommit(commit)
}

// upSummary is the one line an agent reads after up.
func upSummary(w api.World, took time.Duration) string {
	var svcs []string
	for _, s := range w.Services {
		where := s.URL
		if where == "" {
			where = s.Address
		}
		if where != "" {
			svcs = append(svcs, fmt.Sprintf("%s %s %s", s.Name, s.State, where))
		} else {
			svcs = append(svcs, fmt.Sprintf("%s %s", s.Name, s.State))
		}
	}
	ports := fmt.Sprintf("ports %d-%d", w.Ports[0], w.Ports[1])
	if w.Ports == [2]int{} {
		ports = "no ports"
	}
	head := fmt.Sprintf("%s/%s is up in %.1fs (%s)", w.Project, w.Worktree, took.Seconds(), ports)
	if w.Noop {
		head = fmt.Sprintf("%s/%s was already up (%s)", w.Project, w.Worktree, ports)
	}
	if len(svcs) == 0 {
		return head
	}
	return head + ": " + strings.Join(svcs, ", ")
}

func downSummary(w api.World) string {
	return fmt.Sprintf("%s/%s is down: processes stopped; files, ports and slices kept (up %s starts it again)", w.Project, w.Worktree, w.Branch)
}

func statusSummary(r api.StatusResult, now time.Time) string {
	if len(r.Worlds) == 0 && len(r.Remote) == 0 {
		return "no worlds yet: call up in a repository with a binky.toml"
	}
	local := "no worlds on this machine"
	if len(r.Worlds) > 0 {
		local = localSummary(r, now)
	}
	if len(r.Remote) == 0 {
		return local
	}
	return local + "; " + remoteSummary(r.Remote)
}

// remoteSummary lists other hosts' worlds reached from here, each with
// its host and the URLs that answer here (binky --host HOST status has
// the host's own).
func remoteSummary(ws []api.World) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		s := fmt.Sprintf("%s/%s %s on host %s", w.Project, w.Worktree, w.State, w.Host)
		var urls []string
		for _, sv := range w.Services {
			if sv.URL != "" {
				urls = append(urls, sv.Name+" "+sv.URL)
			}
		}
		if len(urls) > 0 {
			s += " (" + strings.Join(urls, ", ") + ")"
		}
		if w.Reason != "" {
			s += " — why: " + w.Reason
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("on other hosts, reached from here: %s", strings.Join(parts, "; "))
}

// localSummary is statusSummary's part for this machine's worlds.
func localSummary(r api.StatusResult, now time.Time) string {
	parts := make([]string, 0, len(r.Worlds))
	for _, w := range r.Worlds {
		s := fmt.Sprintf("%s/%s %s", w.Project, w.Worktree, w.State)
		if v := w.Verify; v != nil {
			verdict := "passed"
			if !v.Passed {
				verdict = "failed"
			}
			stale := ""
			if v.Stale {
				stale = ", stale"
			}
			s += fmt.Sprintf(" (verify %s at %s%s, %s)", verdict, commitLabel(v.Commit, v.Dirty), stale, ago(now.Sub(v.At)))
		}
		if c := costSummary(w.Cost); c != "" {
			s += " {" + c + "}"
		}
		if w.Reason != "" {
			s += " — why: " + w.Reason
		}
		if w.StableName != "" {
			s += " (stable name " + w.StableName + ")"
		}
		if w.Selection != "" {
			var left []string
			for _, sv := range w.Services {
				if sv.LeftOut != "" {
					left = append(left, sv.Name)
				}
			}
			s += fmt.Sprintf(" (runs %s; left out: %s)", w.Selection, strings.Join(left, ", "))
		}
		for _, sv := range w.Services {
			switch n := len(sv.LogTail); {
			case n > 0 && sv.Reason != "":
				// The log's last line is the crash's cause; the rest is
				// in the result's log_tail.
				s += fmt.Sprintf(" [%s: %s; its log ends: %s]", sv.Name, sv.Reason, sv.LogTail[n-1])
			case sv.Reason != "":
				s += fmt.Sprintf(" [%s: %s]", sv.Name, sv.Reason)
			}
		}
		parts = append(parts, s)
	}
	noun := "worlds"
	if len(parts) == 1 {
		noun = "world"
	}
	return fmt.Sprintf("%d %s: %s", len(parts), noun, strings.Join(parts, "; "))
}

// costSummary is a world's cost in a few words: "memory 64 MiB, cpu 2%,
// disk 12 MiB, slices ~3 MiB" (~: approximate, or a slice not told); ""
// when unknown.
func costSummary(c *api.Cost) string {
	if c == nil {
		return ""
	}
	mib := func(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
	parts := []string{"memory " + mib(max(c.Memory, c.RSS))}
	if c.CPUPercent >= 0 {
		parts = append(parts, fmt.Sprintf("cpu %.0f%%", c.CPUPercent))
	}
	if d := c.Disk; d != nil {
		parts = append(parts, "disk "+mib(d.Untracked+d.Ignored))
	}
	if len(c.Slices) > 0 {
		approx := ""
		for _, sl := range c.Slices {
			if sl.Approximate || sl.Unsupported || sl.Error != "" {
				approx = "~"
			}
		}
		parts = append(parts, "slices "+approx+mib(c.SliceBytes))
	}
	return strings.Join(parts, ", ")
}

func envSummary(r EnvResult, order []string) string {
	if len(r.Env) == 0 && len(r.NotRunning) == 0 {
		return fmt.Sprintf("%s/%s exposes nothing ([agents] expose is empty)", r.Project, r.Worktree)
	}
	var names []string
	for _, n := range order {
		if _, ok := r.Env[n]; ok {
			names = append(names, n+"="+r.Env[n])
		}
	}
	if len(names) != len(r.Env) { // order missing or partial: fall back to keys
		names = names[:0]
		for _, k := range sortedKeys(r.Env) {
			names = append(names, k+"="+r.Env[k])
		}
	}
	exposed := strings.Join(names, ", ")
	if exposed == "" {
		exposed = "no running service"
	}
	s := fmt.Sprintf("%s/%s exposes %s", r.Project, r.Worktree, exposed)
	if r.StableName != "" {
		s += " (stable name " + r.StableName + ")"
	}
	if len(r.Direct) > 0 {
		var d []string
		for _, k := range sortedKeys(r.Direct) {
			d = append(d, k+"="+r.Direct[k])
		}
		s += " (direct, without *.localhost: " + strings.Join(d, ", ") + ")"
	}
	if r.State != "" && !r.State.Serving() {
		s += fmt.Sprintf("; warning: the world is %s, nothing answers until up", r.State)
	}
	for _, k := range sortedKeys(r.NotRunning) {
		s += fmt.Sprintf("; %s is not running (%s): no address for it", k, r.NotRunning[k])
	}
	for _, k := range sortedKeys(r.Waiting) {
		s += fmt.Sprintf("; %s is not running yet: it %s through its URL", k, r.Waiting[k])
	}
	return s
}

func verifySummary(v VerifyResult) string {
	browser := ""
	if v.BrowserErrors != nil && *v.BrowserErrors > 0 {
		browser = fmt.Sprintf("; the pages reported %d browser errors since up (browser_logs tool)", *v.BrowserErrors)
	}
	if v.Passed {
		return fmt.Sprintf("verify passed for %s at %s: %d of %d checks passed in %.1fs", v.Worktree, commitLabel(v.Commit, v.Dirty), len(v.Checks), len(v.Checks), float64(v.Duration)/1000) + browser
	}
	var failed []string
	for _, c := range v.Checks {
		if !c.Passed {
			failed = append(failed, fmt.Sprintf("%q (exit %d)", c.Cmd, c.ExitCode))
		}
	}
	return fmt.Sprintf("verify failed for %s at %s: %d of %d checks failed: %s", v.Worktree, commitLabel(v.Commit, v.Dirty), len(failed), len(v.Checks), strings.Join(failed, ", ")) + browser
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
