package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The targets for the largest N: Binky's world costs at most this fraction
// of a private server's.
const (
	memoryTarget = 0.10
	timeTarget   = 0.20
)

// world is one arm after its N-th world.
type world struct {
	N            int     `json:"n"`
	Seconds      float64 `json:"seconds"`       // wall time to make the N-th world
	TotalSeconds float64 `json:"total_seconds"` // to make all N
	PSSMiB       float64 `json:"pss_mib"`       // the arm's processes with N worlds
	MarginalMiB  float64 `json:"marginal_mib"`  // PSSMiB minus that with N-1 (0 before the first)
	Processes    int     `json:"processes"`     // how many processes PSSMiB sums
	// Visitors counts the shared server's processes that were not there
	// before the first world and would not leave within 30s (other clients'
	// backends, autovacuum); they are in the figures. Arm A has none.
	Visitors int `json:"visitors,omitempty"`
	// The same with every shared memory object counted at its whole
	// resident size (see usage.whole).
	WholeMiB         float64 `json:"whole_mib"`
	WholeMarginalMiB float64 `json:"whole_marginal_mib"`
}

type armResult struct {
	Arm         string  `json:"arm"`
	Label       string  `json:"label"`
	Server      string  `json:"server"`
	Project     string  `json:"project,omitempty"` // arm B: the binky project, prefix of its databases
	BaselineMiB float64 `json:"baseline_mib"`      // before the first world; not subtracted
	// BaselineWholeMiB is BaselineMiB with shared memory counted whole.
	BaselineWholeMiB float64 `json:"baseline_whole_mib"`
	Notes            string  `json:"notes,omitempty"`
	Worlds           []world `json:"worlds"`

	wholeMissing bool // some reading of whole shared memory failed
}

type machine struct {
	CPUs       int    `json:"cpus"`
	Kernel     string `json:"kernel"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// ratio is arm B's cost of the N-th world over arm A's; Value is nil when
// arm A's is not positive (nothing to divide by).
type ratio struct {
	B      float64  `json:"binky"`
	A      float64  `json:"private_server"`
	Value  *float64 `json:"ratio"`
	Target float64  `json:"target"`
	Met    bool     `json:"met"`
}

type targets struct {
	N           int    `json:"n"`
	Memory      ratio  `json:"memory"`
	MemoryWhole *ratio `json:"memory_whole,omitempty"`
	Time        ratio  `json:"time"`
}

type report struct {
	Date     string      `json:"date"`
	Command  string      `json:"command"`
	Machine  machine     `json:"machine"`
	Rows     int         `json:"rows"`
	Sweep    []int       `json:"sweep"`
	Settle   string      `json:"settle"`
	Arms     []armResult `json:"arms"`
	Targets  *targets    `json:"targets,omitempty"`
	Complete bool        `json:"complete"`
	// WholeMemory says the whole_* figures were measured (they need root).
	WholeMemory bool `json:"whole_memory"`
	// CoW is arm C, per template size (cow.go).
	CoW []cowSize `json:"cow,omitempty"`
}

func (r *armResult) at(n int) (world, bool) {
	for _, w := range r.Worlds {
		if w.N == n {
			return w, true
		}
	}
	return world{}, false
}

func newRatio(b, a, target float64) ratio {
	r := ratio{B: b, A: a, Target: target}
	if a > 0 {
		v := b / a
		r.Value = &v
		r.Met = v <= target
	}
	return r
}

// compare fills in the targets when both arms reached the largest N.
func (r *report) compare() {
	if len(r.Arms) != 2 || len(r.Sweep) == 0 {
		return
	}
	n := r.Sweep[len(r.Sweep)-1]
	a, okA := r.Arms[0].at(n)
	b, okB := r.Arms[1].at(n)
	if !okA || !okB {
		return
	}
	r.Targets = &targets{
		N:      n,
		Memory: newRatio(b.MarginalMiB, a.MarginalMiB, memoryTarget),
		Time:   newRatio(b.Seconds, a.Seconds, timeTarget),
	}
	if r.WholeMemory {
		m := newRatio(b.WholeMarginalMiB, a.WholeMarginalMiB, memoryTarget)
		r.Targets.MemoryWhole = &m
	}
}

// writeTable prints the report for people: a markdown table of the sweep's
// rows, then the verdict on the targets.
func (r *report) writeTable(w io.Writer) {
	fmt.Fprintf(w, "%d rows per world · %d CPUs · load %s → %s · %s\n", r.Rows, r.Machine.CPUs, r.Machine.LoadBefore, r.Machine.LoadAfter, r.Date)
	for _, a := range r.Arms {
		fmt.Fprintf(w, "arm %s — %s (%s)", strings.ToUpper(a.Arm), a.Label, a.Server)
		if a.Arm == "b" {
			fmt.Fprintf(w, "; the shared server alone before the first world: %.1f MiB PSS", a.BaselineMiB)
			if r.WholeMemory {
				fmt.Fprintf(w, ", %.1f MiB with shared memory whole", a.BaselineWholeMiB)
			}
		}
		if a.Notes != "" {
			fmt.Fprintf(w, "; %s", a.Notes)
		}
		fmt.Fprintln(w)
	}
	if len(r.CoW) > 0 {
		defer writeCoWTable(w, r.CoW)
	}
	if len(r.Arms) == 0 {
		return
	}
	fmt.Fprintln(w)
	head := []string{"N"}
	for _, a := range r.Arms {
		A := strings.ToUpper(a.Arm)
		head = append(head, A+" marginal MiB", A+" marginal s", A+" total MiB", A+" total s")
	}
	rows := [][]string{head}
	for _, n := range r.Sweep {
		row := []string{strconv.Itoa(n)}
		for _, a := range r.Arms {
			if x, ok := a.at(n); ok {
				row = append(row, fmt.Sprintf("%+.1f", x.MarginalMiB)+visitorMark(x), fmt.Sprintf("%.2f", x.Seconds), fmt.Sprintf("%.1f", x.PSSMiB)+visitorMark(x), fmt.Sprintf("%.2f", x.TotalSeconds))
			} else {
				row = append(row, "-", "-", "-", "-")
			}
		}
		rows = append(rows, row)
	}
	writeMarkdown(w, rows)
	if r.WholeMemory {
		fmt.Fprintln(w, "\nMemory again, each shared memory segment counted at its whole resident size (PSS misses the buffers no live process maps):")
		fmt.Fprintln(w)
		head := []string{"N"}
		for _, a := range r.Arms {
			A := strings.ToUpper(a.Arm)
			head = append(head, A+" marginal MiB", A+" total MiB")
		}
		rows := [][]string{head}
		for _, n := range r.Sweep {
			row := []string{strconv.Itoa(n)}
			for _, a := range r.Arms {
				if x, ok := a.at(n); ok {
					row = append(row, fmt.Sprintf("%+.1f", x.WholeMarginalMiB)+visitorMark(x), fmt.Sprintf("%.1f", x.WholeMiB)+visitorMark(x))
				} else {
					row = append(row, "-", "-")
				}
			}
			rows = append(rows, row)
		}
		writeMarkdown(w, rows)
	}
	if t := r.Targets; t != nil {
		fmt.Fprintf(w, "\nworld %d, Binky vs a private server:\n", t.N)
		fmt.Fprintf(w, "  %-24s %+.1f MiB vs %+.1f MiB = %s (target ≤ %.2f: %s)\n", "memory (PSS)", t.Memory.B, t.Memory.A, ratioText(t.Memory), t.Memory.Target, verdict(t.Memory))
		if m := t.MemoryWhole; m != nil {
			fmt.Fprintf(w, "  %-24s %+.1f MiB vs %+.1f MiB = %s (target ≤ %.2f: %s)\n", "memory (shared whole)", m.B, m.A, ratioText(*m), m.Target, verdict(*m))
		}
		fmt.Fprintf(w, "  %-24s %.2f s vs %.2f s = %s (target ≤ %.2f: %s)\n", "time", t.Time.B, t.Time.A, ratioText(t.Time), t.Time.Target, verdict(t.Time))
	}
	for _, a := range r.Arms {
		for _, x := range a.Worlds {
			if x.Visitors > 0 && slices.Contains(r.Sweep, x.N) {
				fmt.Fprintf(w, "\n* arm %s, world %d: the shared server still served %d other client process(es) after 30s; they are counted.\n", strings.ToUpper(a.Arm), x.N, x.Visitors)
			}
		}
	}
	if !r.Complete {
		fmt.Fprintln(w, "\n(incomplete: the run stopped early)")
	}
}

func visitorMark(x world) string {
	if x.Visitors > 0 {
		return "*"
	}
	return ""
}

func ratioText(r ratio) string {
	if r.Value == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *r.Value)
}

func verdict(r ratio) string {
	switch {
	case r.Value == nil:
		return "cannot tell"
	case r.Met:
		return "met"
	}
	return "missed"
}

// writeMarkdown prints rows as a markdown table, columns padded to line up,
// numbers right-aligned.
func writeMarkdown(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for i := range width {
		width[i] = 3
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			fmt.Fprintf(w, "| %*s ", width[i], c)
		}
		fmt.Fprintln(w, "|")
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i]-1) + ":"
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}
