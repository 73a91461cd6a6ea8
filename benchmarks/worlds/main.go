package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	sweep    []int
	rows     int
	arms     []string // "a", "b", in order
	adminURL string
	pgBin    string
	binDir   string
	json     bool
	settle   time.Duration
	// Arm C (cow.go).
	cowAdminURL string
	cowSizes    []int // MB
	cowWorlds   int
	walWorlds   int
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worlds:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = benchmark(ctx, o, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worlds:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("worlds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{}
	sweep := fs.String("sweep", "1,2,4,8", "numbers of worlds to report (comma-separated); worlds are added one at a time up to the largest")
	arms := fs.String("arms", "a,b", "arms to run: a (a private server per world), b (Binky), c (copy-on-write clones on PostgreSQL 18, by template size)")
	cowSizes := fs.String("cow-sizes", "100,500,2000", "arm C: template sizes in MB")
	fs.StringVar(&o.cowAdminURL, "cow-admin-url", "postgres://postgres@127.0.0.1:5418/postgres", "arm C: a PostgreSQL 18 server on a reflink filesystem whose data directory is readable here (scripts/testenv up pg18)")
	fs.IntVar(&o.cowWorlds, "cow-worlds", 8, "arm C: copy-on-write worlds per template size")
	fs.IntVar(&o.walWorlds, "wal-worlds", 2, "arm C: WAL_LOG copies per template size, for comparison")
	fs.IntVar(&o.rows, "rows", 200000, "rows seeded into every world")
	fs.StringVar(&o.adminURL, "admin-url", "postgres://postgres@127.0.0.1:5432/postgres", "arm B: the shared PostgreSQL server (a superuser; becomes PG_ADMIN_URL)")
	fs.StringVar(&o.pgBin, "pg-bin", "", "arm A: directory holding initdb, pg_ctl and postgres (default: the newest /usr/lib/postgresql/*/bin)")
	fs.StringVar(&o.binDir, "bin", "", "arm B: directory holding binky and binky-adapter-postgres (default: build them into a temporary directory)")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON instead of a table")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "pause after each world before reading memory")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.sweep, err = parseSweep(*sweep); err != nil {
		return o, err
	}
	if o.arms, err = parseArms(*arms); err != nil {
		return o, err
	}
	if slices.Contains(o.arms, "c") {
		if o.cowSizes, err = parseSizes(*cowSizes); err != nil {
			return o, err
		}
		if o.cowWorlds < 1 || o.walWorlds < 1 {
			return o, fmt.Errorf("--cow-worlds %d, --wal-worlds %d: want at least 1 of each", o.cowWorlds, o.walWorlds)
		}
	}
	if o.rows < 1 {
		return o, fmt.Errorf("--rows %d: want at least 1", o.rows)
	}
	return o, nil
}

// parseSweep reads "1,2,4,8": positive counts, returned sorted and unique.
func parseSweep(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("--sweep %q: %q is not a number of worlds from 1 to 64", s, strings.TrimSpace(f))
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseSizes reads "100,500,2000": template sizes in MB, in order.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 100000 {
			return nil, fmt.Errorf("--cow-sizes %q: %q is not a size in MB from 1 to 100000", s, strings.TrimSpace(f))
		}
		out = append(out, n)
	}
	return out, nil
}

func parseArms(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "a" && f != "b" && f != "c" {
			return nil, fmt.Errorf("--arms %q: %q is none of a (a private server per world), b (Binky), c (copy-on-write on PostgreSQL 18)", s, f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, nil
}

// arm is one way of making worlds.
type arm interface {
	addWorld(ctx context.Context, i int) (time.Duration, error)
	memory(ctx context.Context) (usage, error)
	verify(ctx context.Context) error
}

func benchmark(ctx context.Context, o options, args []string, stdout, stderr io.Writer) (err error) {
	if err := checkPlatform(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "binky-worlds-")
	if err != nil {
		return err
	}
	u := &undo{log: stderr}
	u.push("remove "+work, func(context.Context) error { return os.RemoveAll(work) })
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if cerr := u.unwind(cctx, 0); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up (remove by hand what is listed above): %w", cerr))
		}
	}()
	// The private servers' directories lie under work; their user must pass.
	if err := os.Chmod(work, 0o711); err != nil {
		return err
	}

	rep := &report{
		Date:    time.Now().Format("2006-01-02 15:04 MST"),
		Command: "go run ./benchmarks/worlds " + strings.Join(args, " "),
		Machine: machine{CPUs: runtime.NumCPU(), Kernel: kernel(), LoadBefore: loadAvg()},
		Rows:    o.rows,
		Sweep:   o.sweep,
		Settle:  o.settle.String(),
	}
	maxN := o.sweep[len(o.sweep)-1]
	progress := stderr
	var runErr error
	for _, name := range o.arms {
		if name == "c" {
			cow, err := runCoW(ctx, o, work, u, progress)
			rep.CoW = cow
			if err != nil {
				runErr = fmt.Errorf("arm C: %w", err)
				break
			}
			continue
		}
		mark := u.mark()
		res, err := runArm(ctx, name, o, work, maxN, u, progress)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted: cleaning up")
		}
		if res != nil {
			rep.Arms = append(rep.Arms, *res)
		}
		// Take this arm down before the next starts, so neither shares the
		// machine with the other's processes.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		uerr := u.unwind(uctx, mark)
		cancel()
		if uerr != nil && err == nil {
			err = fmt.Errorf("take arm %s down: %w", name, uerr)
		}
		if err != nil {
			runErr = fmt.Errorf("arm %s: %w", strings.ToUpper(name), err)
			break
		}
	}
	rep.Complete = runErr == nil
	rep.WholeMemory = len(rep.Arms) > 0
	for _, a := range rep.Arms {
		rep.WholeMemory = rep.WholeMemory && !a.wholeMissing
	}
	rep.Machine.LoadAfter = loadAvg()
	rep.compare()
	if len(rep.Arms) > 0 || len(rep.CoW) > 0 {
		if o.json {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				return err
			}
		} else {
			rep.writeTable(stdout)
		}
	}
	return runErr
}

// runArm makes the worlds of one arm, measuring after each.
func runArm(ctx context.Context, name string, o options, work string, maxN int, u *undo, progress io.Writer) (*armResult, error) {
	var a arm
	res := &armResult{Arm: name}
	switch name {
	case "a":
		pg, err := findPgTools(o.pgBin)
		if err != nil {
			return nil, err
		}
		sqlDir := filepath.Join(work, "sql")
		if err := os.MkdirAll(sqlDir, 0o755); err != nil {
			return nil, err
		}
		sql, err := writeSQL(sqlDir, o.rows)
		if err != nil {
			return nil, err
		}
		pa, err := newPrivateArm(pg, filepath.Join(work, "a"), sql, o.rows, u)
		if err != nil {
			return nil, err
		}
		res.Label = "a private server per world: initdb, start, migrate, seed"
		res.Server = pg.version(ctx)
		a = pa
	case "b":
		binDir, err := filepath.Abs(o.binDir)
		if err != nil {
			return nil, err
		}
		if o.binDir == "" {
			binDir = filepath.Join(work, "bin")
			fmt.Fprintln(progress, "building binky and binky-adapter-postgres…")
			if err := buildBinky(ctx, binDir); err != nil {
				return nil, err
			}
		}
		for _, exe := range []string{"binky", "binky-adapter-postgres"} {
			if !exists(filepath.Join(binDir, exe)) {
				return nil, fmt.Errorf("find %s in %s: not there (make build puts it in bin/)", exe, binDir)
			}
		}
		psql := lookPath("psql", "")
		if psql == "" {
			return nil, errors.New("find psql on PATH: not there (Debian: apt-get install postgresql-client)")
		}
		ba, err := newBinkyArm(ctx, binDir, psql, o.adminURL, filepath.Join(work, "b"), o.rows, u)
		if err != nil {
			return nil, err
		}
		res.Label = "Binky: one shared server, a golden template built once, a clone per world (binky up)"
		res.Server = ba.serverVersion(ctx)
		res.Project = ba.project
		base, err := measureTree([]int{ba.postmaster})
		if err != nil {
			return nil, err
		}
		res.BaselineMiB, res.BaselineWholeMiB = mib(base.pss), mib(base.whole())
		defer func() { res.Notes = ba.cloneMethods() }()
		a = ba
	}
	var prev world
	for i := 1; i <= maxN; i++ {
		d, err := a.addWorld(ctx, i)
		if err != nil {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(o.settle):
		}
		m, err := a.memory(ctx)
		if err != nil {
			return res, err
		}
		w := world{
			N: i, Seconds: d.Seconds(), TotalSeconds: prev.TotalSeconds + d.Seconds(),
			PSSMiB: mib(m.pss), WholeMiB: mib(m.whole()), Processes: m.procs, Visitors: m.others,
		}
		w.MarginalMiB, w.WholeMarginalMiB = w.PSSMiB-prev.PSSMiB, w.WholeMiB-prev.WholeMiB
		if !m.wholeOK {
			res.wholeMissing = true
		}
		res.Worlds = append(res.Worlds, w)
		fmt.Fprintf(progress, "arm %s world %d: %.2fs; %d processes, PSS %.1f MiB (%+.1f), shared memory counted whole %.1f MiB (%+.1f)",
			strings.ToUpper(name), i, w.Seconds, w.Processes, w.PSSMiB, w.MarginalMiB, w.WholeMiB, w.WholeMarginalMiB)
		if w.Visitors > 0 {
			fmt.Fprintf(progress, "; %d of them serve other clients", w.Visitors)
		}
		fmt.Fprintln(progress)
		prev = w
	}
	if err := a.verify(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// buildBinky builds the CLI and the PostgreSQL adapter into dir, from the
// workspace this program runs in.
func buildBinky(ctx context.Context, dir string) error {
	for _, pkg := range []string{"github.com/binkyhq/binky/cmd/binky", "github.com/binkyhq/binky/cmd/binkyd", "github.com/binkyhq/binky/plugins/postgres/cmd/binky-adapter-postgres"} {
		out := filepath.Join(dir, filepath.Base(pkg))
		if _, err := run(ctx, command{name: "go", args: []string{"build", "-o", out, pkg}}); err != nil {
			return fmt.Errorf("build %s (or pass --bin DIR after make build): %w", filepath.Base(pkg), err)
		}
	}
	return nil
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// lookPath finds name on PATH, else answers fallback.
func lookPath(name, fallback string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return fallback
}
