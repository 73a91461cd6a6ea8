// Command idle measures what an idle daemon costs: the CPU binkyd uses
// while nobody calls it, with 10 and then 50 worlds of 3 services, each a
// tiny HTTP server (benchmarks/proxy/backend) with an http health check,
// which the daemon repeats every 5 s per service. The figure is the
// daemon's own CPU time (utime + stime of /proc/<pid>/stat) over --measure (60s),
// as a percentage of one core. Issue 44's goal: ≤ 1 % with 50 worlds,
// growing no faster than the number of services.
//
// Each arm is a set of binaries: the working tree's (built first), and,
// with --before REF, the tree of git REF (extracted with git archive and
// built). Arms run one after another in the same sitting, each in a
// daemon of its own (temporary BINKY_HOME and repository, removed again):
// up to 10 worlds, settle, measure; up to 50, settle, measure; --rounds
// times, the arms alternating.
//
//	go run ./benchmarks/idle --before main          # before/after
//	taskset -c 1 go run ./benchmarks/idle           # pinned to one CPU
//	go run ./benchmarks/idle --bin after=bin        # binaries already built
//
// Linux only (it reads /proc). It reports; it asserts nothing.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	var o options
	var bins multiFlag
	flag.Var(&bins, "bin", "an arm as LABEL=DIR (DIR holds binky, binkyd and backend); repeatable; default: build the working tree as \"after\"")
	flag.StringVar(&o.before, "before", "", "also build git REF (e.g. main) as the arm \"before\"")
	flag.StringVar(&o.worlds, "worlds", "10,50", "world counts to measure at, ascending")
	flag.IntVar(&o.services, "services", 3, "health-checked services per world")
	flag.DurationVar(&o.seconds, "measure", 60*time.Second, "how long the daemon's CPU is measured at each count")
	flag.DurationVar(&o.settle, "settle", 15*time.Second, "pause after the last up before measuring")
	flag.IntVar(&o.rounds, "rounds", 1, "times every arm is measured, alternating")
	flag.IntVar(&o.portBase, "ports", 21000, "first port of the arms' port ranges (1000 ports each, below the ephemeral range)")
	flag.Parse()
	o.bins = bins
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "idle benchmark:", err)
		os.Exit(1)
	}
}

type options struct {
	bins             []string
	before           string
	worlds           string
	services, rounds int
	seconds, settle  time.Duration
	portBase         int
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// arm is one set of binaries under test.
type arm struct{ label, dir string }

// result is one measurement.
type result struct {
	arm    string
	round  int
	worlds int
	cpu    float64 // % of one core
	procs  int     // services running
}

func run(ctx context.Context, o options) error {
	counts, err := parseCounts(o.worlds)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "binky-idlebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	root, err := repoRoot()
	if err != nil {
		return err
	}
	var arms []arm
	if o.before != "" {
		dir := filepath.Join(work, "before")
		fmt.Fprintf(os.Stderr, "building %s as before…\n", o.before)
		if err := buildRef(ctx, root, o.before, filepath.Join(work, "before-src"), dir); err != nil {
			return err
		}
		arms = append(arms, arm{"before", dir})
	}
	for _, b := range o.bins {
		label, dir, ok := strings.Cut(b, "=")
		if !ok {
			return fmt.Errorf("--bin %q: want LABEL=DIR", b)
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return err
		}
		arms = append(arms, arm{label, dir})
	}
	if len(o.bins) == 0 {
		dir := filepath.Join(work, "after")
		fmt.Fprintln(os.Stderr, "building the working tree as after…")
		if err := build(ctx, root, dir); err != nil {
			return err
		}
		arms = append(arms, arm{"after", dir})
	}
	var results []result
	for r := range o.rounds {
		for i, a := range arms {
			rs, err := measureArm(ctx, o, a, r, counts, filepath.Join(work, fmt.Sprintf("%s-%d", a.label, r)), o.portBase+1000*i)
			results = append(results, rs...)
			if err != nil {
				report(results)
				return fmt.Errorf("arm %s: %w", a.label, err)
			}
		}
	}
	report(results)
	return nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("--worlds %q: want ascending counts", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// measureArm brings worlds up in a daemon of its own and measures it at
// each count.
func measureArm(ctx context.Context, o options, a arm, round int, counts []int, dir string, ports int) ([]result, error) {
	w := &bench{bin: a.dir, home: filepath.Join(dir, "home"), repo: filepath.Join(dir, "repo")}
	if err := w.init(o.services, ports); err != nil {
		return nil, err
	}
	defer w.cleanup()
	var out []result
	for _, n := range counts {
		fmt.Fprintf(os.Stderr, "%s round %d: up to %d worlds…\n", a.label, round+1, n)
		if err := w.upTo(ctx, n); err != nil {
			return out, err
		}
		if err := sleep(ctx, o.settle); err != nil {
			return out, err
		}
		pid, err := w.daemonPid()
		if err != nil {
			return out, err
		}
		before, err := cpuTicks(pid)
		if err != nil {
			return out, err
		}
		start := time.Now()
		if err := sleep(ctx, o.seconds); err != nil {
			return out, err
		}
		after, err := cpuTicks(pid)
		if err != nil {
			return out, err
		}
		secs := float64(after-before) / clockTicks
		out = append(out, result{arm: a.label, round: round + 1, worlds: n,
			cpu: 100 * secs / time.Since(start).Seconds(), procs: n * o.services})
		fmt.Fprintf(os.Stderr, "  %d worlds: %.2f %% of a core\n", n, out[len(out)-1].cpu)
	}
	return out, nil
}

func report(rs []result) {
	fmt.Printf("%-8s %5s %7s %9s %12s %16s\n", "arm", "round", "worlds", "services", "CPU % core", "per service, µs/s")
	for _, r := range rs {
		fmt.Printf("%-8s %5d %7d %9d %12.2f %16.1f\n", r.arm, r.round, r.worlds, r.procs, r.cpu, 1e4*r.cpu/float64(r.procs))
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// cpuTicks is pid's utime + stime, fields 14 and 15 of /proc/<pid>/stat.
func cpuTicks(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command (field 2) may hold spaces: fields count from its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return u + s, nil
}

// bench is one daemon's home and repository.
type bench struct {
	bin, home, repo string
	up              int
}

func (w *bench) branch(i int) string { return fmt.Sprintf("idle-%02d", i) }

func (w *bench) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		// BINKY_PPROF passes: a daemon built with -tags pprof serves
		// profiles there while it is measured.
		if !strings.HasPrefix(kv, "BINKY_") || strings.HasPrefix(kv, "BINKY_PPROF=") {
			env = append(env, kv)
		}
	}
	return append(env, "BINKY_HOME="+w.home, "BINKY_PROXY_ADDR=127.0.0.1:0", "BINKY_PROXY_TLS_ADDR=127.0.0.1:0",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
}

// init writes a repository whose world is services tiny HTTP servers, each
// with an http health check, in ports [ports, ports+999].
func (w *bench) init(services, ports int) error {
	if err := os.MkdirAll(w.repo, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[project]\nname = \"idle\"\nport_range = [%d, %d]\n", ports, ports+999)
	backend := filepath.Join(w.bin, "backend")
	for i := range services {
		fmt.Fprintf(&b, "\n[services.s%d]\nports = [\"http\"]\ncmd = \"exec '%s' -addr 127.0.0.1:${self.port}\"\nhealth = \"http://127.0.0.1:${self.port}/\"\n", i, backend)
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

func (w *bench) run(exe string, args ...string) error {
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = w.repo, w.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(exe), strings.Join(args, " "), err, out)
	}
	return nil
}

// upTo brings worlds up until n are.
func (w *bench) upTo(ctx context.Context, n int) error {
	for ; w.up < n; w.up++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := w.run(filepath.Join(w.bin, "binky"), "up", "-q", w.branch(w.up)); err != nil {
			return err
		}
	}
	return nil
}

func (w *bench) daemonPid() (int, error) {
	b, err := os.ReadFile(filepath.Join(w.home, "daemon.pid"))
	if err != nil {
		return 0, fmt.Errorf("the daemon's pid: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

// cleanup stops the daemon and ends the services it leaves running (every
// process whose executable is one of the arm's binaries); the caller
// removes the directories. Removing each world instead takes tens of
// seconds a world on a busy machine.
func (w *bench) cleanup() {
	w.run(filepath.Join(w.bin, "binky"), "daemon", "stop")
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + p.Name() + "/exe"); err == nil && filepath.Dir(exe) == w.bin {
			if proc, err := os.FindProcess(pid); err == nil {
				proc.Kill()
			}
		}
	}
}

// repoRoot is the top of the binky repository this runs in.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("run inside the binky repository: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// build builds binky, binkyd and the backend of the tree at src into dir.
func build(ctx context.Context, src, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(os.PathSeparator),
		"./cmd/binky", "./cmd/binkyd", "./benchmarks/proxy/backend")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", src, err, out)
	}
	return nil
}

// buildRef extracts git ref of the repository at root into src (git
// archive: the repository is not touched) and builds it into dir.
func buildRef(ctx context.Context, root, ref, src, dir string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", ref)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %v\n%s", ref, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("extract %s: %v\n%s", ref, err, stderr.String())
	}
	return build(ctx, src, dir)
}
