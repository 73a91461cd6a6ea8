// Command testsum reads `go test -json` for one module and prints what a
// reader of a CI log needs: one line per package (as go test does), the
// output of each failing test (passing tests stay quiet, as in go test
// without -v), and the module's count. It saves that count to a record;
// `testsum -summary` then prints one line per module, the total, every
// skipped test with its reason, the failures and the slowest packages.
//
//	testsum -module DIR -record FILE [-v] -- go test -json ARGS...
//	go test -json ARGS... | testsum -module DIR -record FILE [-v]
//	testsum -summary FILE...
//
// A test case is a test without subtests, or each subtest (fuzz seeds
// included); a parent test counts only when it fails on its own. A package
// that fails outside any test (a build error, a TestMain exit, a timeout)
// counts as one failure, and so does a command that exits non-zero with no
// failure seen. The exit status is 1 when anything failed.
//
// `make unit` runs it for every module (Makefile).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	module := flag.String("module", ".", "the module's directory, as the summary names it")
	recordPath := flag.String("record", "", "write the module's record (JSON) to this file")
	verbose := flag.Bool("v", false, "print every test's output as it comes, as go test -v does")
	summary := flag.Bool("summary", false, "print the summary of the records named as arguments")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testsum -module DIR -record FILE [-v] [-- go test -json ARGS...]\n       testsum -summary RECORD...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *summary {
		os.Exit(summarize(os.Stdout, flag.Args()))
	}
	os.Exit(runModule(*module, *recordPath, *verbose, flag.Args()))
}

// runModule reads go test -json (from the command in args, else stdin),
// prints as it goes and writes the record.
func runModule(module, recordPath string, verbose bool, args []string) int {
	start := time.Now()
	c := newCollector(os.Stdout, module, verbose)
	exitCode := -1
	if len(args) > 0 {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			return 2
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			return 2
		}
		c.read(out)
		err = cmd.Wait()
		exitCode = 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			exitCode = ee.ExitCode()
		case err != nil:
			fmt.Fprintln(os.Stderr, "testsum:", err)
			exitCode = 2
		}
	} else {
		c.read(os.Stdin)
	}
	rec := c.finish(exitCode, time.Since(start))
	fmt.Printf("== %s: %s in %s\n", displayModule(module), rec.counts(), seconds(rec.Seconds))
	if recordPath != "" {
		b, _ := json.MarshalIndent(rec, "", "  ")
		if err := os.WriteFile(recordPath, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			return 2
		}
	}
	if rec.failed() {
		return 1
	}
	return 0
}

// event is one line of go test -json (cmd/test2json, and the build
// events go test adds).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string // build-output and build-fail
	FailedBuild string
}

// Case is one test named in a record: a skip with its reason, or a failure.
type Case struct {
	Package string `json:"package"`
	Test    string `json:"test,omitempty"` // empty: the package failed outside any test
	Reason  string `json:"reason,omitempty"`
}

// PackageTime is how long one package's tests ran, and how they ended.
type PackageTime struct {
	Package string  `json:"package"`
	Seconds float64 `json:"seconds"`
	Result  string  `json:"result"` // ok, FAIL
}

// TestTime is how long one top-level test ran (a second or more).
type TestTime struct {
	Package string  `json:"package"`
	Test    string  `json:"test"`
	Seconds float64 `json:"seconds"`
}

// Record is what one module's run leaves for the summary.
type Record struct {
	Module   string        `json:"module"`
	Seconds  float64       `json:"seconds"` // wall time of the whole go test
	ExitCode int           `json:"exit_code"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	Skips    []Case        `json:"skips,omitempty"`
	Fails    []Case        `json:"fails,omitempty"`
	Packages []PackageTime `json:"packages,omitempty"`
	Tests    []TestTime    `json:"tests,omitempty"`
}

func (r *Record) counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
}

func (r *Record) failed() bool { return r.Failed > 0 || r.ExitCode > 0 }

type testState struct {
	name    string
	action  string // pass, fail, skip; empty while it runs
	elapsed float64
	out     []string
}

type line struct {
	test string // empty: the package's own output
	text string
}

type pkgState struct {
	name  string
	tests map[string]*testState
	order []string
	lines []line
}

// collector follows the packages of one go test -json stream.
type collector struct {
	w       io.Writer
	module  string
	verbose bool
	pkgs    map[string]*pkgState
	rec     Record
}

func newCollector(w io.Writer, module string, verbose bool) *collector {
	return &collector{w: w, module: module, verbose: verbose, pkgs: map[string]*pkgState{}, rec: Record{Module: module}}
}

func (c *collector) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		b := sc.Bytes()
		var e event
		if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil || e.Action == "" {
			fmt.Fprintf(c.w, "%s\n", b) // not an event: pass it on
			continue
		}
		c.event(&e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(c.w, "testsum: reading go test -json:", err)
		c.rec.Fails = append(c.rec.Fails, Case{Package: c.module, Reason: "testsum could not read the output: " + err.Error()})
		c.rec.Failed++
	}
}

func (c *collector) pkg(name string) *pkgState {
	p := c.pkgs[name]
	if p == nil {
		p = &pkgState{name: name, tests: map[string]*testState{}}
		c.pkgs[name] = p
	}
	return p
}

func (c *collector) event(e *event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(c.w, e.Output) // compile errors: shown as go test shows them
		return
	case "build-fail", "start":
		return
	}
	if e.Package == "" {
		return
	}
	p := c.pkg(e.Package)
	if e.Test != "" {
		t := p.tests[e.Test]
		if t == nil {
			t = &testState{name: e.Test}
			p.tests[e.Test] = t
			p.order = append(p.order, e.Test)
		}
		switch e.Action {
		case "output":
			t.out = append(t.out, e.Output)
			p.lines = append(p.lines, line{test: e.Test, text: e.Output})
			if c.verbose {
				fmt.Fprint(c.w, e.Output)
			}
		case "pass", "fail", "skip":
			t.action, t.elapsed = e.Action, e.Elapsed
		}
		return
	}
	switch e.Action {
	case "output":
		p.lines = append(p.lines, line{text: e.Output})
		if c.verbose && !isResultLine(e.Output) {
			fmt.Fprint(c.w, e.Output)
		}
	case "pass", "fail", "skip":
		c.endPackage(p, e)
		delete(c.pkgs, e.Package)
	}
}

// isResultLine: go test's last line for a package ("ok  \tpkg\t0.1s",
// "FAIL\tpkg\t0.1s", "?   \tpkg\t[no test files]").
func isResultLine(s string) bool {
	return strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "?   \t")
}

var framing = regexp.MustCompile(`^\s*=== (RUN|PAUSE|CONT|NAME)\s`)

// endPackage counts p's test cases and prints what go test would.
func (c *collector) endPackage(p *pkgState, e *event) {
	if e.Action == "skip" && len(p.order) == 0 {
		return // no test files
	}
	var (
		failedTests = map[string]bool{}
		fails       int
	)
	for _, name := range p.order {
		t := p.tests[name]
		if t.action == "" && e.Action == "fail" {
			t.action = "fail" // the test binary ended during it (a panic, a timeout)
		}
		if t.action == "fail" {
			failedTests[name] = true
		}
	}
	// A parent is a test with subtests; it counts only when it failed and
	// none of them did (its own failure).
	parent, descendantFailed := map[string]bool{}, map[string]bool{}
	for _, name := range p.order {
		for i := range len(name) {
			if name[i] == '/' && p.tests[name[:i]] != nil {
				parent[name[:i]] = true
				descendantFailed[name[:i]] = descendantFailed[name[:i]] || failedTests[name]
			}
		}
	}
	for _, name := range p.order {
		t := p.tests[name]
		if t.elapsed >= 1 && !strings.Contains(name, "/") {
			c.rec.Tests = append(c.rec.Tests, TestTime{Package: p.name, Test: name, Seconds: t.elapsed})
		}
		switch {
		case t.action == "fail" && !descendantFailed[name]:
			c.rec.Failed++
			fails++
			c.rec.Fails = append(c.rec.Fails, Case{Package: p.name, Test: name})
		case parent[name]:
		case t.action == "pass":
			c.rec.Passed++
		case t.action == "skip":
			c.rec.Skipped++
			c.rec.Skips = append(c.rec.Skips, Case{Package: p.name, Test: name, Reason: skipReason(t.out)})
		}
	}
	if e.Action == "fail" && fails == 0 {
		why := "the test binary failed outside any test (TestMain, init or a panic)"
		if e.FailedBuild != "" {
			why = "build failed"
		}
		c.rec.Failed++
		c.rec.Fails = append(c.rec.Fails, Case{Package: p.name, Reason: why})
	}
	result := "ok"
	if e.Action == "fail" {
		result = "FAIL"
	}
	c.rec.Packages = append(c.rec.Packages, PackageTime{Package: p.name, Seconds: e.Elapsed, Result: result})

	// What go test prints without -v: for a failure, each failed test's
	// "--- FAIL" line and its output, nested as go test nests subtests,
	// then the package's own lines; for a pass, its "ok" line alone.
	if e.Action != "fail" || c.verbose {
		for _, l := range p.lines {
			if l.test == "" && isResultLine(l.text) {
				fmt.Fprint(c.w, l.text)
			}
		}
		return
	}
	for _, name := range p.order {
		if failedTests[name] {
			printFailed(c.w, name, p.tests[name].out)
		}
	}
	for _, l := range p.lines {
		if l.test == "" {
			fmt.Fprint(c.w, l.text)
		}
	}
}

// printFailed prints a failed test's "--- FAIL" line, then what it
// logged, both indented four spaces a level as go test nests subtests.
// (Under test2json, go test streams a log line before the "--- FAIL"
// line and indents every one by four spaces alone.)
func printFailed(w io.Writer, name string, out []string) {
	indent := strings.Repeat("    ", strings.Count(name, "/"))
	head := ""
	var body []string
	for _, s := range strings.Split(strings.TrimSuffix(strings.Join(out, ""), "\n"), "\n") {
		switch {
		case framing.MatchString(s):
		case head == "" && strings.HasPrefix(strings.TrimSpace(s), "--- FAIL: "):
			head = strings.TrimSpace(s)
		default:
			body = append(body, s)
		}
	}
	if head == "" {
		head = "--- FAIL: " + name + " (did not finish)"
	}
	fmt.Fprintf(w, "%s%s\n", indent, head)
	for _, b := range body {
		fmt.Fprintf(w, "%s%s\n", indent, b)
	}
}

// finish ends the stream: packages still open had their output cut off.
func (c *collector) finish(exitCode int, took time.Duration) Record {
	open := make([]string, 0, len(c.pkgs))
	for name := range c.pkgs {
		open = append(open, name)
	}
	slices.Sort(open)
	for _, name := range open {
		c.endPackage(c.pkgs[name], &event{Action: "fail", Package: name})
	}
	c.rec.ExitCode = exitCode
	c.rec.Seconds = took.Seconds()
	if exitCode > 0 && c.rec.Failed == 0 {
		c.rec.Failed++
		c.rec.Fails = append(c.rec.Fails, Case{Package: c.module, Reason: fmt.Sprintf("go test exited with status %d and no failure in its output", exitCode)})
	}
	return c.rec
}

var logPrefix = regexp.MustCompile(`^\S+\.go:\d+: `)

// skipReason is the last message a skipped test logged (t.Skip's), on one
// line.
func skipReason(out []string) string {
	var msg []string
	for _, s := range strings.Split(strings.Join(out, ""), "\n") {
		t := strings.TrimSpace(s)
		switch {
		case t == "" || framing.MatchString(s) || strings.HasPrefix(t, "--- "):
		case logPrefix.MatchString(t):
			msg = []string{logPrefix.ReplaceAllString(t, "")}
		case msg != nil:
			msg = append(msg, t) // a message's continuation line
		}
	}
	if len(msg) == 0 {
		return "(no message)"
	}
	r := strings.Join(msg, " ")
	if len(r) > 300 {
		r = r[:297] + "..."
	}
	return r
}

// summarize prints the table of the records at paths; 1 when any failed.
func summarize(w io.Writer, paths []string) int {
	var recs []Record
	status := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		var r Record
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			fmt.Fprintf(w, "testsum: %v\n", err)
			status = 1
			continue
		}
		recs = append(recs, r)
	}
	trim := rootModule() + "/"
	short := func(pkg string) string {
		if s, ok := strings.CutPrefix(pkg, trim); ok {
			return s
		}
		return pkg
	}
	width := len("total")
	for _, r := range recs {
		width = max(width, len(displayModule(r.Module)))
	}
	var total Record
	var skips, fails []Case
	var pkgs []PackageTime
	var tests []TestTime
	fmt.Fprintln(w, "== test summary (a test case is a test without subtests, or a subtest)")
	for _, r := range recs {
		mark := "ok  "
		if r.failed() {
			mark = "FAIL"
			status = 1
		}
		fmt.Fprintf(w, "%s  %-*s  %7s  %s\n", mark, width, displayModule(r.Module), seconds(r.Seconds), r.counts())
		total.Passed += r.Passed
		total.Failed += r.Failed
		total.Skipped += r.Skipped
		total.Seconds += r.Seconds
		skips = append(skips, r.Skips...)
		fails = append(fails, r.Fails...)
		pkgs = append(pkgs, r.Packages...)
		tests = append(tests, r.Tests...)
	}
	mark := "ok  "
	if status != 0 {
		mark = "FAIL"
	}
	fmt.Fprintf(w, "%s  %-*s  %7s  %s\n", mark, width, "total", seconds(total.Seconds), total.counts())
	if len(skips) > 0 {
		fmt.Fprintf(w, "skipped (%d):\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "  %s %s: %s\n", short(s.Package), s.Test, s.Reason)
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(w, "failed (%d; their output is above):\n", len(fails))
		for _, f := range fails {
			switch {
			case f.Test == "":
				fmt.Fprintf(w, "  %s: %s\n", short(f.Package), f.Reason)
			default:
				fmt.Fprintf(w, "  %s %s\n", short(f.Package), f.Test)
			}
		}
	}
	slices.SortFunc(pkgs, func(a, b PackageTime) int { return cmp.Compare(b.Seconds, a.Seconds) })
	if len(pkgs) > 8 {
		pkgs = pkgs[:8]
	}
	if len(pkgs) > 0 {
		fmt.Fprintln(w, "slowest packages (test binary time; packages run side by side):")
		for _, p := range pkgs {
			fmt.Fprintf(w, "  %7s  %s\n", seconds(p.Seconds), short(p.Package))
		}
	}
	slices.SortFunc(tests, func(a, b TestTime) int { return cmp.Compare(b.Seconds, a.Seconds) })
	if len(tests) > 8 {
		tests = tests[:8]
	}
	if len(tests) > 0 {
		fmt.Fprintln(w, "slowest tests (parallel tests overlap):")
		for _, t := range tests {
			fmt.Fprintf(w, "  %7s  %s %s\n", seconds(t.Seconds), short(t.Package), t.Test)
		}
	}
	return status
}

// rootModule is the module path in ./go.mod, trimmed from package names.
func rootModule() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "\x00"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return "\x00"
}

func displayModule(m string) string {
	if m == "." || m == "" {
		return ". (root)"
	}
	return strings.TrimPrefix(m, "./")
}

func seconds(s float64) string { return fmt.Sprintf("%.1fs", s) }
