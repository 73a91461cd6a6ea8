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

// The jobs section (issue 29): n concurrent `binky run` of a CPU-bound
// command that also holds memory, through the jobs queue bounded at
// jobs, against the same n unqueued (the daemon's BINKY_TEST_ADMISSION=off
// hook skips the queue, nothing else). Reported: total wall time and peak
// RSS of the commands both ways, the p50/p99 wait in the queue, and
// admission's cost per job (a trivial command run one at a time, on
// against off).

// jobScript spins the CPU for a while holding 64 MB; jobTag marks its
// processes for the RSS sampler.
const (
	jobTag    = "binkybenchjob"
	jobScript = "import sys\n# " + jobTag + "\nx = bytearray(64 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ns = 0\nfor i in range(int(sys.argv[1])): s += i\n"
)

type jobsResult struct {
	wallOn, wallOff time.Duration
	rssOn, rssOff   uint64 // bytes, peak sum over the commands
	waits           []time.Duration
	costOn, costOff []time.Duration
}

var waitedRE = regexp.MustCompile(`admitted waited ([0-9.]+[a-zµ]+)`)

func jobs(ctx context.Context, tmp, bin string, n, limit int, loops string) (jobsResult, error) {
	var res jobsResult
	homes := map[string]*home{}
	defer func() {
		for _, h := range homes {
			h.close()
		}
	}()
	for i, mode := range []string{"on", "off"} {
		extra := []string{}
		if mode == "off" {
			extra = append(extra, "BINKY_TEST_ADMISSION=off")
		}
		h, err := newHome(ctx, tmp, "jobs-"+mode, bin, 41000+i*1000, "exec sleep 600", fmt.Sprintf("\n[admission]\njobs = %d\n", limit), extra...)
		if err != nil {
			return res, err
		}
		homes[mode] = h
		if _, err := h.must(ctx, "up", "j", "-q"); err != nil {
			return res, err
		}
	}
	// Admission's cost per job: a trivial command, one at a time,
	// alternating between the two homes so both see the same load.
	for range 20 {
		for _, mode := range []string{"on", "off"} {
			start := time.Now()
			if _, err := homes[mode].must(ctx, "run", "j", "-q", "--", "true"); err != nil {
				return res, err
			}
			if mode == "on" {
				res.costOn = append(res.costOn, time.Since(start))
			} else {
				res.costOff = append(res.costOff, time.Since(start))
			}
		}
	}
	for _, mode := range []string{"on", "off"} {
		h := homes[mode]
		stopSampler := sampleRSS(jobTag)
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, n)
		waits := make([]time.Duration, n)
		for k := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := h.cmd(ctx, "run", "j", "--", "python3", "-c", jobScript, loops)
				var stderr bytes.Buffer
				c.Stderr = &stderr
				if err := c.Run(); err != nil {
					errs[k] = fmt.Errorf("run %d: %v\n%s", k, err, stderr.String())
					return
				}
				if m := waitedRE.FindStringSubmatch(stderr.String()); m != nil {
					waits[k], _ = time.ParseDuration(m[1])
				}
			}()
		}
		wg.Wait()
		wall := time.Since(start)
		rss := stopSampler()
		if err := errors.Join(errs...); err != nil {
			return res, err
		}
		if mode == "on" {
			res.wallOn, res.rssOn, res.waits = wall, rss, waits
		} else {
			res.wallOff, res.rssOff = wall, rss
		}
	}
	return res, nil
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
	fmt.Printf("%d concurrent binky run of a CPU-bound command holding 64 MB, jobs = %d\n", n, limit)
	fmt.Printf("  queued    wall %-10s peak RSS %s\n", ms(r.wallOn), mb(r.rssOn))
	fmt.Printf("  unqueued  wall %-10s peak RSS %s\n", ms(r.wallOff), mb(r.rssOff))
	fmt.Printf("  wait in the queue  p50 %s  p99 %s  max %s\n", ms(percentile(r.waits, 50)), ms(percentile(r.waits, 99)), ms(slices.Max(r.waits)))
	fmt.Printf("  binky run -- true, one at a time (20): median %s queued, %s unqueued → admission's cost per job %+.2fms (goal ≤ 1 ms; go test -bench Job ./host/admission gives the queue's own)\n",
		ms(median(r.costOn)), ms(median(r.costOff)), float64((median(r.costOn)-median(r.costOff)).Microseconds())/1000)
}
