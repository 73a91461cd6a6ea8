// Command admission measures what admission control costs and how fast it
// reacts (docs/admission.md), through Binky's CLI and proxy:
//
//   - handoff: the latency from a `down` to the next queued world being
//     admitted and starting (max_parallel 1; from the down_done event to
//     world_admitted and up_started, read from events.log). Goal ≤ 100 ms.
//   - overhead: the wall time of 20 concurrent `up`s with admission on but
//     nothing limited, against the same with admission skipped (the
//     daemon's BINKY_TEST_ADMISSION=off hook). Goal ≤ 5%. On a busy
//     machine this end-to-end difference is noise; admission's own cost
//     per up is `go test -bench . ./host/admission` (microseconds).
//   - jobs: 20 concurrent `binky run` of a CPU-bound command with
//     jobs = 2, against 20 unqueued, in interleaved rounds: wall time
//     (median, spread, the queued/unqueued ratio within each round), peak
//     RSS, p50/p99 wait in the queue, the hand-off gap between one
//     command's end and the next one's start, and admission's cost per job
//     (jobs.go). --only jobs runs just this part; --before DIR adds the
//     binaries in DIR as two more arms of the same rounds.
//   - wake: the latency of a request through the proxy to a suspended
//     world (goal ≤ 50 ms over a request to a running one), and to a down
//     world with wake = true (goal: the service's own start plus ≤ 100 ms).
//
// Memory pressure is played through the daemon's BINKY_TEST_PRESSURE file,
// so the run needs none. It needs git, python3 (the woken service) and Go
// (to build binky unless --bin is given). Everything lives in a temporary
// directory, removed on exit.
//
//	go run ./benchmarks/admission [--rounds 10] [--ups 20] [--bin DIR] [--only jobs] [--jobs 2] [--runs 20] [--job-rounds 3] [--before DIR]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 10, "measurements per latency")
	ups := flag.Int("ups", 20, "concurrent ups for the overhead")
	trials := flag.Int("trials", 3, "runs of the concurrent ups, each way (the median is reported)")
	bin := flag.String("bin", "", "directory holding binky (default: build it)")
	only := flag.String("only", "", "run one part: jobs")
	njobs := flag.Int("jobs", 2, "[admission] jobs for the jobs part")
	runs := flag.Int("runs", 20, "concurrent binky run for the jobs part")
	loops := flag.String("loops", "10000000", "loop count of the CPU-bound command")
	jobRounds := flag.Int("job-rounds", 3, "rounds of the jobs part (every arm once a round, interleaved)")
	before := flag.String("before", "", "jobs part: also run the binaries in this directory (say, main's), in the same rounds")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *only == "jobs" {
		err := func() error {
			tmp, err := os.MkdirTemp("", "binky-bench-admission-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			if bin, err := build(ctx, tmp, *bin); err != nil {
				return err
			} else if r, err := jobs(ctx, tmp, bin, *before, *runs, *njobs, *jobRounds, *loops); err != nil {
				return err
			} else {
				printJobs(r, *runs, *njobs)
			}
			return nil
		}()
		if err != nil {
			fmt.Fprintln(os.Stderr, "admission benchmark:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, *bin, *before, *rounds, *ups, *trials, *jobRounds); err != nil {
		fmt.Fprintln(os.Stderr, "admission benchmark:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, before string, rounds, ups, trials, jobRounds int) error {
	tmp, err := os.MkdirTemp("", "binky-bench-admission-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin, err = build(ctx, tmp, bin); err != nil {
		return err
	}

	h, err := handoff(ctx, tmp, bin, rounds)
	if err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	on, off, err := overhead(ctx, tmp, bin, ups, trials)
	if err != nil {
		return fmt.Errorf("overhead: %w", err)
	}
	w, err := wake(ctx, tmp, bin, rounds)
	if err != nil {
		return fmt.Errorf("wake: %w", err)
	}
	jr, err := jobs(ctx, tmp, bin, before, 20, 2, jobRounds, "10000000")
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	defer printJobs(jr, 20, 2)

	fmt.Printf("down → next queued world (max_parallel 1, %d rounds)\n", rounds)
	fmt.Printf("  admitted      median %-8s max %-8s (goal ≤ 100ms)\n", ms(median(h.admitted)), ms(slices.Max(h.admitted)))
	fmt.Printf("  up started    median %-8s max %s\n", ms(median(h.started)), ms(slices.Max(h.started)))
	fmt.Printf("%d concurrent ups, nothing limited (median of %d)\n", ups, trials)
	fmt.Printf("  admission on  %s\n  admission off %s\n  overhead      %+.1f%% (goal ≤ 5%%)\n", ms(on), ms(off), 100*(float64(on)/float64(off)-1))
	fmt.Printf("wake on request (%d rounds, a request through the proxy)\n", rounds)
	fmt.Printf("  running world       median %s\n", ms(median(w.running)))
	fmt.Printf("  suspended world     median %-8s max %-8s → +%s over running (goal ≤ 50ms)\n", ms(median(w.suspended)), ms(slices.Max(w.suspended)), ms(median(w.suspended)-median(w.running)))
	fmt.Printf("  down world, wake    median %-8s max %s\n", ms(median(w.down)), ms(slices.Max(w.down)))
	if len(w.woken) > 0 {
		fmt.Printf("    from the request: spawned %s, healthy %s, routes published %s (medians)\n", ms(median(w.spawned)), ms(median(w.healthy)), ms(median(w.woken)))
	}
	fmt.Printf("  the service's own start (python3 http.server until it answers) median %s → +%s (goal ≤ 100ms)\n", ms(median(w.own)), ms(median(w.down)-median(w.own)))
	return nil
}

// build builds binky and binkyd into tmp/bin unless bin is given.
func build(ctx context.Context, tmp, bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(tmp, "bin")
	fmt.Fprintln(os.Stderr, "building binky…")
	for _, name := range []string{"binky", "binkyd"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, name), "github.com/binkyhq/binky/cmd/"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s (or pass --bin DIR): %v\n%s", name, err, out)
		}
	}
	return bin, nil
}

type handoffResult struct{ admitted, started []time.Duration }

// handoff: max_parallel 1; world i is up, world i+1 waits; down i admits it.
func handoff(ctx context.Context, tmp, bin string, rounds int) (handoffResult, error) {
	var res handoffResult
	h, err := newHome(ctx, tmp, "handoff", bin, 30000, "exec sleep 600", "")
	if err != nil {
		return res, err
	}
	defer h.close()
	if _, err := h.must(ctx, "reserve", "--max-parallel", "1"); err != nil {
		return res, err
	}
	if _, err := h.must(ctx, "up", "h0"); err != nil {
		return res, err
	}
	for i := range rounds {
		next := fmt.Sprintf("h%d", i+1)
		up := h.cmd(ctx, "up", next, "-q")
		if err := up.Start(); err != nil {
			return res, err
		}
		// Wait until it is queued.
		for {
			out, _ := h.must(ctx, "status", "--json")
			if strings.Contains(out, `"position": 1`) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := h.must(ctx, "down", fmt.Sprintf("h%d", i)); err != nil {
			return res, err
		}
		if err := up.Wait(); err != nil {
			return res, fmt.Errorf("up %s: %w", next, err)
		}
		evs, err := h.events()
		if err != nil {
			return res, err
		}
		var down, adm, start time.Time
		for _, e := range evs {
			switch {
			case e.Event == "down_done" && e.Worktree == fmt.Sprintf("h%d", i):
				down = e.TS
			case e.Event == "world_admitted" && e.Worktree == next:
				adm = e.TS
			case e.Event == "up_started" && e.Worktree == next:
				start = e.TS
			}
		}
		if down.IsZero() || adm.IsZero() || start.IsZero() {
			return res, fmt.Errorf("round %d: events missing (down %v, admitted %v, started %v)", i, down, adm, start)
		}
		res.admitted = append(res.admitted, adm.Sub(down))
		res.started = append(res.started, start.Sub(down))
	}
	return res, nil
}

// overhead: n concurrent ups of fresh worlds, admission on (nothing
// limited) and off, trials times each, alternating which goes first (the
// cleanup of one run still loads the machine at the start of the next).
func overhead(ctx context.Context, tmp, bin string, n, trials int) (on, off time.Duration, err error) {
	var ons, offs []time.Duration
	for t := range trials {
		modes := []string{"on", "off"}
		if t%2 == 1 {
			modes = []string{"off", "on"}
		}
		for _, mode := range modes {
			extra := []string{}
			if mode == "off" {
				extra = append(extra, "BINKY_TEST_ADMISSION=off")
			}
			h, err := newHome(ctx, tmp, fmt.Sprintf("over-%s-%d", mode, t), bin, 31000+t*2000+map[string]int{"on": 0, "off": 1000}[mode], "exec sleep 600", "", extra...)
			if err != nil {
				return 0, 0, err
			}
			if _, err := h.must(ctx, "daemon", "start"); err != nil {
				h.close()
				return 0, 0, err
			}
			start := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = h.must(ctx, "up", fmt.Sprintf("o%d", i), "-q")
				}()
			}
			wg.Wait()
			took := time.Since(start)
			h.close()
			if err := errors.Join(errs...); err != nil {
				return 0, 0, err
			}
			if mode == "on" {
				ons = append(ons, took)
			} else {
				offs = append(offs, took)
			}
		}
	}
	return median(ons), median(offs), nil
}

type wakeResult struct {
	running, suspended, down, own []time.Duration
	// Where a down world's wake spends its time, from the request:
	// until its service is spawned, until it is healthy, until the wake is
	// recorded (routes published).
	spawned, healthy, woken []time.Duration
}

// wake: two worlds (the oldest is never suspended); the newest is
// suspended by playing pressure, then requested; then downed and requested.
func wake(ctx context.Context, tmp, bin string, rounds int) (wakeResult, error) {
	var res wakeResult
	if _, err := exec.LookPath("python3"); err != nil {
		return res, errors.New("python3 is needed for the woken service")
	}
	h, err := newHome(ctx, tmp, "wake", bin, 40000,
		"exec python3 -m http.server ${self.port} --bind 127.0.0.1",
		`url = "web"`+"\n"+`health = { http = "http://127.0.0.1:${self.port}/", interval = "20ms" }`)
	if err != nil {
		return res, err
	}
	defer h.close()
	if _, err := h.must(ctx, "reserve", "--ram", "20"); err != nil {
		return res, err
	}
	for _, w := range []string{"keep", "w"} {
		if _, err := h.must(ctx, "up", w, "-q"); err != nil {
			return res, err
		}
	}
	out, err := h.must(ctx, "daemon", "status", "--json")
	if err != nil {
		return res, err
	}
	var ds struct {
		ProxyPort int `json:"proxy_port"`
	}
	json.Unmarshal([]byte(out), &ds)
	client := &http.Client{Timeout: time.Minute}
	get := func() (time.Duration, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://127.0.0.1:%d/", ds.ProxyPort), nil)
		req.Host = "web.w.bench.localhost"
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("GET through the proxy: %s", resp.Status)
		}
		return time.Since(start), nil
	}
	state := func() string {
		out, _ := h.must(ctx, "status", "--json")
		var s struct {
			Worlds []struct{ Worktree, State string }
		}
		json.Unmarshal([]byte(out), &s)
		for _, w := range s.Worlds {
			if w.Worktree == "w" {
				return w.State
			}
		}
		return ""
	}
	for range rounds {
		d, err := get()
		if err != nil {
			return res, err
		}
		res.running = append(res.running, d)
		// Suspend w: free RAM below the reserve, then back between the
		// reserve and reserve+hysteresis, where nothing moves by itself.
		h.setRAM(15)
		for state() != "suspended" {
			time.Sleep(20 * time.Millisecond)
		}
		h.setRAM(22)
		time.Sleep(150 * time.Millisecond)
		if d, err = get(); err != nil {
			return res, err
		}
		res.suspended = append(res.suspended, d)
		// Down, then a request starts it.
		if _, err := h.must(ctx, "down", "w", "-q"); err != nil {
			return res, err
		}
		reqAt := time.Now()
		if d, err = get(); err != nil {
			return res, err
		}
		res.down = append(res.down, d)
		if evs, err := h.events(); err == nil {
			var spawned, healthy, woken time.Time
			for _, e := range evs {
				if e.Worktree != "w" || e.TS.Before(reqAt) {
					continue
				}
				switch e.Event {
				case "service_started":
					spawned = e.TS
				case "service_healthy":
					healthy = e.TS
				case "world_woken":
					woken = e.TS
				}
			}
			if !spawned.IsZero() && !healthy.IsZero() && !woken.IsZero() {
				res.spawned = append(res.spawned, spawned.Sub(reqAt))
				res.healthy = append(res.healthy, healthy.Sub(reqAt))
				res.woken = append(res.woken, woken.Sub(reqAt))
			}
		}
		// The service's own start, outside binky, for comparison.
		if d, err = ownStart(ctx); err != nil {
			return res, err
		}
		res.own = append(res.own, d)
	}
	return res, nil
}

// ownStart starts the service by hand and polls it until it answers, as
// binky's health check does (every 500 ms by default would be unfair: poll
// every 10 ms).
func ownStart(ctx context.Context) (time.Duration, error) {
	port := 40999
	start := time.Now()
	cmd := exec.CommandContext(ctx, "python3", "-m", "http.server", fmt.Sprint(port), "--bind", "127.0.0.1")
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for time.Since(start) < 30*time.Second {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err == nil {
			resp.Body.Close()
			return time.Since(start), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, errors.New("python3 http.server did not answer in 30s")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
