// Command cli times binky's client path against a hello-world Go binary in
// the same run: `binky --version`, `binky env <wt>` and `binky status` with
// 2 worlds, and `binky status` with 50 worlds of 3 services each. Each is
// the median wall time of --n runs (after warm-ups). The worlds run
// `sleep` services in a temporary BINKY_HOME and repository, which the
// program removes again.
//
// Instructions: when valgrind is on PATH, each row is also run under
// callgrind (--cg-runs times, the median reported) and its instruction
// count set against the hello-world's. Instructions are stable where wall
// time is not (a busy machine changes the one, not the other). Go's
// asynchronous preemption signals trip a callgrind assertion, so those
// runs set GODEBUG=asyncpreemptoff=1 (the hello-world's too). Without
// valgrind the arm is skipped, saying so.
//
// Before and after in one sitting: --before DIR measures the binky in DIR
// as well, row by row beside the other, against the same daemon and
// worlds (build main's into DIR first).
//
// Re-up: a world whose web is `python3 -m http.server` is brought down and
// up again --reups times. Each `binky up` is timed, and a poller asks the
// web's port for an answer every millisecond from the moment up starts, so
// the table shows how long after python first answered up reported the
// world healthy. The baseline is python alone: the time from spawning the
// same server to its first answer.
//
//	go run ./benchmarks/cli                  # builds binky and binkyd first
//	go run ./benchmarks/cli --bin DIR        # binaries already built in DIR
//	go run ./benchmarks/cli --bin DIR --before MAINDIR --reups 0
//
// It reports; it asserts nothing (issue 18's goals are in the README).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "directory with binky (and binkyd); default: build both into a temporary directory")
	flag.IntVar(&o.n, "n", 30, "runs per measurement (the median is reported)")
	flag.IntVar(&o.worlds, "worlds", 50, "worlds for the large status measurement")
	flag.IntVar(&o.services, "services", 3, "services per world")
	flag.IntVar(&o.reups, "reups", 10, "re-ups of the python world (0 skips them)")
	flag.StringVar(&o.before, "before", "", "directory with another binky (main's) to measure beside --bin's, row by row")
	flag.IntVar(&o.cgRuns, "cg-runs", 3, "callgrind runs per row (the median is reported; 0 skips the instruction counts)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "cli benchmark:", err)
		os.Exit(1)
	}
}

type options struct {
	bin              string
	n                int
	worlds, services int
	reups            int
	before           string
	cgRuns           int
}

// row is one measurement: its median wall time and instruction count
// (0: not counted).
type row struct {
	what   string
	median time.Duration
	instr  int64
}

func run(ctx context.Context, o options) error {
	work, err := os.MkdirTemp("", "binky-clibench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.before != "" {
		if o.before, err = filepath.Abs(o.before); err != nil {
			return err
		}
	}
	if o.cgRuns > 0 {
		if _, err := exec.LookPath("valgrind"); err != nil {
			fmt.Fprintln(os.Stderr, "instruction counts skipped: valgrind not found on PATH (apt-get install valgrind)")
			o.cgRuns = 0
		}
	}
	if o.bin == "" {
		o.bin = filepath.Join(work, "bin")
		fmt.Fprintln(os.Stderr, "building binky and binkyd…")
		if err := gobuild(ctx, o.bin, "github.com/binkyhq/binky/cmd/binky", "github.com/binkyhq/binky/cmd/binkyd"); err != nil {
			return err
		}
	} else if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	hello, err := buildHello(ctx, work)
	if err != nil {
		return err
	}

	w := &world{bin: filepath.Join(o.bin, "binky"), home: filepath.Join(work, "home"), repo: filepath.Join(work, "repo")}
	if err := w.init(o.services); err != nil {
		return err
	}
	defer w.cleanup()

	var rows []row
	one := func(what, exe string, args ...string) error {
		r := row{what: what}
		if r.median, err = median(ctx, o.n, w, exe, args...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if o.cgRuns > 0 {
			if r.instr, err = instructions(ctx, o.cgRuns, w, exe, args...); err != nil {
				return fmt.Errorf("%s under callgrind: %w", what, err)
			}
		}
		rows = append(rows, r)
		return nil
	}
	// measure measures binky (and, with --before, the other binky).
	measure := func(what, exe string, args ...string) error {
		if o.before == "" || exe != w.bin {
			return one(what, exe, args...)
		}
		if err := one(what+" (before)", filepath.Join(o.before, "binky"), args...); err != nil {
			return err
		}
		return one(what+" (after)", exe, args...)
	}
	if err := measure("hello-world Go binary", hello); err != nil {
		return err
	}
	if err := measure("binky --version", w.bin, "--version"); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bringing 2 worlds up…")
	if err := w.upTo(ctx, 2); err != nil {
		return err
	}
	if err := measure("binky env <wt> (2 worlds)", w.bin, "env", w.branch(0)); err != nil {
		return err
	}
	if err := measure("binky status (2 worlds)", w.bin, "status"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bringing %d worlds up…\n", o.worlds)
	if err := w.upTo(ctx, o.worlds); err != nil {
		return err
	}
	if err := measure(fmt.Sprintf("binky status (%d worlds × %d services)", o.worlds, o.services), w.bin, "status"); err != nil {
		return err
	}

	var re *reupResult
	if o.reups > 0 {
		if _, err := exec.LookPath("python3"); err != nil {
			fmt.Fprintln(os.Stderr, "re-up skipped: python3 not found")
		} else {
			fmt.Fprintln(os.Stderr, "timing re-ups of a python3 -m http.server world…")
			if re, err = reup(ctx, o, w.bin, work); err != nil {
				return fmt.Errorf("re-up: %w", err)
			}
		}
	}

	fmt.Printf("median of %d runs each (load %s)", o.n, loadavg())
	if o.cgRuns > 0 {
		fmt.Printf("; instructions: callgrind, median of %d", o.cgRuns)
	}
	fmt.Print("\n\n")
	if o.cgRuns > 0 {
		fmt.Println("| what | median | × hello-world | instructions | × hello-world |")
		fmt.Println("|---|---|---|---|---|")
	} else {
		fmt.Println("| what | median | × hello-world |")
		fmt.Println("|---|---|---|")
	}
	for _, r := range rows {
		fmt.Printf("| %s | %.1f ms | %.1f× |", r.what, ms(r.median), float64(r.median)/float64(rows[0].median))
		if o.cgRuns > 0 {
			fmt.Printf(" %.2f M | %.1f× |", float64(r.instr)/1e6, float64(r.instr)/float64(rows[0].instr))
		}
		fmt.Println()
	}
	if re != nil {
		fmt.Printf("\nre-up, median of %d (load %s)\n\n", o.reups, loadavg())
		fmt.Println("| what | median | × python alone |")
		fmt.Println("|---|---|---|")
		fmt.Printf("| python3 -m http.server alone: spawn to first answer | %.1f ms | 1.0× |\n", ms(re.python))
		fmt.Printf("| `binky up` of the down world (re-up) | %.1f ms | %.1f× |\n", ms(re.up), float64(re.up)/float64(re.python))
		fmt.Printf("| up's start to python's first answer | %.1f ms | |\n", ms(re.answer))
		fmt.Printf("| python's first answer to up returning healthy | %.1f ms | |\n", ms(re.lag))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median runs exe n times (after two warm-ups) in the world's repository
// and environment and returns the median wall time of one run.
func median(ctx context.Context, n int, w *world, exe string, args ...string) (time.Duration, error) {
	times := make([]time.Duration, 0, n)
	for i := -2; i < n; i++ {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Dir, cmd.Env = w.repo, w.environ()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("%v\n%s", err, out)
		}
		if i >= 0 {
			times = append(times, d)
		}
	}
	return med(times), nil
}

// instructions runs exe under callgrind n times in the world's repository
// and environment and returns the median count of instructions executed.
func instructions(ctx context.Context, n int, w *world, exe string, args ...string) (int64, error) {
	counts := make([]int64, 0, n)
	for range n {
		cmd := exec.CommandContext(ctx, "valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=" + os.DevNull, exe}, args...)...)
		// Go's preemption signals trip callgrind (threads.c: sigNum ==
		// current_state.sig); the runs of every row go without them alike.
		cmd.Dir, cmd.Env = w.repo, append(w.environ(), "GODEBUG=asyncpreemptoff=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("%v\n%s", err, stderr.String())
		}
		m := collected.FindStringSubmatch(stderr.String())
		if m == nil {
			return 0, fmt.Errorf("no \"Collected\" line in callgrind's output:\n%s", stderr.String())
		}
		c, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, err
		}
		counts = append(counts, c)
	}
	slices.Sort(counts)
	return counts[len(counts)/2], nil
}

// collected is callgrind's summary line: "==pid== Collected : 15012345".
var collected = regexp.MustCompile(`Collected : (\d+)`)

// world is the benchmark's BINKY_HOME and repository.
type world struct {
	bin, home, repo string
	up              int
}

func (w *world) branch(i int) string { return fmt.Sprintf("bench-%02d", i) }

func (w *world) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BINKY_") {
			env = append(env, kv)
		}
	}
	return append(env, "BINKY_HOME="+w.home, "BINKY_PROXY_ADDR=127.0.0.1:0", "BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
}

// init writes a repository whose world is services sleeping processes
// (no ports, no adapters).
func (w *world) init(services int) error {
	if err := os.MkdirAll(w.repo, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("[project]\nname = \"clibench\"\n")
	for i := range services {
		fmt.Fprintf(&b, "\n[services.s%d]\ncmd = \"exec sleep 3600\"\n", i)
	}
	if err := os.WriteFile(filepath.Join(w.repo, "binky.toml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if err := w.run("git", args...); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) run(exe string, args ...string) error {
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = w.repo, w.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(exe), strings.Join(args, " "), err, out)
	}
	return nil
}

// upTo brings worlds up until n are.
func (w *world) upTo(ctx context.Context, n int) error {
	for ; w.up < n; w.up++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := w.run(w.bin, "up", "-q", w.branch(w.up)); err != nil {
			return err
		}
	}
	return nil
}

// cleanup removes every world it made and stops the daemon.
func (w *world) cleanup() {
	for i := range w.up {
		if err := w.run(w.bin, "remove", "-q", "--force", w.branch(i)); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
		}
	}
	w.run(w.bin, "daemon", "stop")
}

func gobuild(ctx context.Context, dir string, pkgs ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// As releases are built (tools/dist): static, no build paths.
	args := append([]string{"build", "-trimpath", "-o", dir + string(os.PathSeparator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (or pass --bin DIR): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// buildHello builds the baseline: a Go program that prints one line.
func buildHello(ctx context.Context, work string) (string, error) {
	src := filepath.Join(work, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	exe := filepath.Join(work, "hello-bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hello-world: %v\n%s", err, out)
	}
	return exe, nil
}

// loadavg is /proc/loadavg's first three fields, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
