package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The jobs section (issue 29, issue 44): n concurrent `binky run` of a
// CPU-bound command that also holds memory, through the jobs queue
// bounded at jobs, against the same n unqueued (the daemon's
// BINKY_TEST_ADMISSION=off hook skips the queue, nothing else), in
// rounds: each round runs every arm once, in an order that rotates from
// round to round, so a machine whose load drifts weighs on every arm
// alike. With --before DIR the binaries in DIR (main's, say) run as two
// more arms in the same rounds. Reported per arm: the median wall time
// with its spread, the median of each round's queued/unqueued ratio, peak
// RSS of the commands, the p50/p99 wait in the queue, and the hand-off
// gap: from a command's end to the first line of the command that took
// its place (the wrapper's exit, the daemon's hand-off, the fork and exec
// of the next, python's own start). Then admission's cost per job (a
// trivial command run one at a time, on against off).

// jobScript spins the CPU for a while holding 64 MB, then prints when it
// started (its first line) and ended; jobTag marks its processes for the
// RSS sampler.
const (
	jobTag    = "binkybenchjob"
	jobScript = "import sys, time\nt0 = time.time()\n# " + jobTag + "\nx = bytearray(64 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ns = 0\nfor i in range(int(sys.argv[1])): s += i\nprint('%.6f %.6f' % (t0, time.time()))\n"
)

// jobArm is one daemon: a build (after, or before) with the queue on or
// off.
type jobArm struct {
	name  string // "queued", "unqueued", "queued (before)", …
	build string // "after" or "before"
	on    bool
	h     *home
}

// jobRound is one arm's measure in one round.
type jobRound struct {
	wall  time.Duration
	rss   uint64 // bytes, peak sum over the commands
	waits []time.Duration
	gaps  []time.Duration // queued: end of one command → first line of the next
}

type jobsResult struct {
	arms            []*jobArm
	rounds          map[string][]jobRound // by arm name, in round order
	costOn, costOff []time.Duration
	load            []string // the load average before each round
}

var waitedRE = regexp.MustCompile(`admitted waited ([0-9.]+[a-zµ]+)`)

func jobs(ctx context.Context, tmp, bin, before string, n, limit, rounds int, loops string) (jobsResult, error) {
	res := jobsResult{rounds: map[string][]jobRound{}}
	defer func() {
		for _, a := range res.arms {
			a.h.close()
		}
	}()
	builds := []struct{ name, bin string }{{"after", bin}}
	if before != "" {
		builds = append(builds, struct{ name, bin string }{"before", before})
	}
	// Port blocks below the kernel's ephemeral range (32768 and up here).
	lo := 21000
	for _, b := range builds {
		for _, on := range []bool{true, false} {
			a := &jobArm{name: map[bool]string{true: "queued", false: "unqueued"}[on], build: b.name, on: on}
			if b.name == "before" {
				a.name += " (before)"
			}
			var extra []string
			if !on {
				extra = append(extra, "BINKY_TEST_ADMISSION=off")
			}
			h, err := newHome(ctx, tmp, fmt.Sprintf("jobs-%d", lo), b.bin, lo, "exec sleep 600", fmt.Sprintf("\n[admission]\njobs = %d\n", limit), extra...)
			if err != nil {
				return res, err
			}
			lo += 1000
			a.h = h
			res.arms = append(res.arms, a)
			if _, err := h.must(ctx, "up", "j", "-q"); err != nil {
				return res, err
			}
		}
	}
	// Admission's cost per job: a trivial command, one at a time,
	// alternating between the two homes of the build measured so both see
	// the same load.
	for range 20 {
		for _, a := range res.arms[:2] {
			start := time.Now()
			if _, err := a.h.must(ctx, "run", "j", "-q", "--", "true"); err != nil {
				return res, err
			}
			if a.on {
				res.costOn = append(res.costOn, time.Since(start))
			} else {
				res.costOff = append(res.costOff, time.Since(start))
			}
		}
	}
	for r := range rounds {
		la, _ := os.ReadFile("/proc/loadavg")
		res.load = append(res.load, strings.Join(strings.Fields(string(la))[:min(3, len(strings.Fields(string(la))))], " "))
		for i := range res.arms {
			a := res.arms[(i+r)%len(res.arms)]
			m, err := jobRun(ctx, a, n, limit, loops)
			if err != nil {
				return res, fmt.Errorf("%s, round %d: %w", a.name, r+1, err)
			}
			res.rounds[a.name] = append(res.rounds[a.name], m)
			fmt.Fprintf(os.Stderr, "round %d: %-18s wall %s\n", r+1, a.name, ms(m.wall))
		}
	}
	return res, nil
}

// jobRun runs n commands at once through arm a's daemon.
func jobRun(ctx context.Context, a *jobArm, n, limit int, loops string) (jobRound, error) {
	var m jobRound
	stopSampler := sampleRSS(jobTag)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	waits := make([]time.Duration, n)
	spans := make([][2]float64, n)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := a.h.cmd(ctx, "run", "j", "--", "python3", "-c", jobScript, loops)
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			if err := c.Run(); err != nil {
				errs[k] = fmt.Errorf("run %d: %v\n%s", k, err, stderr.String())
				return
			}
			if m := waitedRE.FindStringSubmatch(stderr.String()); m != nil {
				waits[k], _ = time.ParseDuration(m[1])
			}
			if f := strings.Fields(stdout.String()); len(f) == 2 {
				spans[k][0], _ = strconv.ParseFloat(f[0], 64)
				spans[k][1], _ = strconv.ParseFloat(f[1], 64)
			}
		}()
	}
	wg.Wait()
	m.wall = time.Since(start)
	m.rss = stopSampler()
	if err := errors.Join(errs...); err != nil {
		return m, err
	}
	m.waits = waits
	if a.on {
		m.gaps = handoffGaps(spans, limit)
	}
	return m, nil
}

// handoffGaps: with limit places, the i-th command to start after the
// first limit took the place of the (i-limit)-th to end; its gap is from
// that end to its own first line.
func handoffGaps(spans [][2]float64, limit int) []time.Duration {
	var starts, ends []float64
	for _, s := range spans {
		if s[0] > 0 {
			starts, ends = append(starts, s[0]), append(ends, s[1])
		}
	}
	slices.Sort(starts)
	slices.Sort(ends)
	var gaps []time.Duration
	for i := limit; i < len(starts); i++ {
		gaps = append(gaps, time.Duration((starts[i]-ends[i-limit])*1e9))
	}
	return gaps
}

// sampleRSS sums, every 10 ms, the resident memory of the processes whose
// command line holds tag, and returns the peak when stopped.
func sampleRSS(tag string) func() uint64 {
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if sum := taggedRSS(tag); sum > peak {
				peak = sum
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak }
}

func taggedRSS(tag string) uint64 {
	dirs, _ := os.ReadDir("/proc")
	var sum uint64
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cl, []byte(tag)) {
			continue
		}
		// The command itself, not the binky run that carries it.
		if argv0, _, _ := bytes.Cut(cl, []byte{0}); !strings.HasPrefix(filepath.Base(string(argv0)), "python") {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				sum += kb << 10
			}
		}
	}
	return sum
}

// percentile is the p-th percentile (0-100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func printJobs(r jobsResult, n, limit int) {
	mb := func(b uint64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }
	s := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	rounds := len(r.rounds[r.arms[0].name])
	fmt.Printf("%d concurrent binky run of a CPU-bound command holding 64 MB, jobs = %d, %d rounds (load average before each: %s)\n",
		n, limit, rounds, strings.Join(r.load, " · "))
	for _, a := range r.arms {
		var walls, waits, gaps []time.Duration
		var rss uint64
		for _, m := range r.rounds[a.name] {
			walls = append(walls, m.wall)
			waits = append(waits, m.waits...)
			gaps = append(gaps, m.gaps...)
			rss = max(rss, m.rss)
		}
		fmt.Printf("  %-18s wall median %-7s (%s–%s)  peak RSS %s\n", a.name, s(median(walls)), s(slices.Min(walls)), s(slices.Max(walls)), mb(rss))
		if a.on {
			fmt.Printf("  %-18s wait in the queue p50 %s p99 %s; hand-off gap p50 %s p90 %s max %s\n", "", s(percentile(waits, 50)), s(percentile(waits, 99)),
				ms(percentile(gaps, 50)), ms(percentile(gaps, 90)), ms(slices.Max(gaps)))
		}
	}
	for _, b := range []string{"", " (before)"} {
		on, off := r.rounds["queued"+b], r.rounds["unqueued"+b]
		if len(on) == 0 {
			continue
		}
		var ratios []float64
		for i := range on {
			ratios = append(ratios, on[i].wall.Seconds()/off[i].wall.Seconds())
		}
		sorted := slices.Clone(ratios)
		slices.Sort(sorted)
		var each []string
		for _, x := range ratios {
			each = append(each, fmt.Sprintf("%.2f", x))
		}
		fmt.Printf("  queued / unqueued%s, within each round: median %.2f× (rounds: %s; goal ≤ 1.15×)\n", b, sorted[len(sorted)/2], strings.Join(each, ", "))
	}
	fmt.Printf("  binky run -- true, one at a time (20): median %s queued, %s unqueued → admission's cost per job %+.2fms (goal ≤ 1 ms; go test -bench Job ./host/admission gives the queue's own)\n",
		ms(median(r.costOn)), ms(median(r.costOff)), float64((median(r.costOn)-median(r.costOff)).Microseconds())/1000)
}
