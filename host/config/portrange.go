package config

import (
	"fmt"
	"strconv"
	"strings"
)

// EphemeralPorts is what CheckPortRange needs to know of the ports this
// machine's system hands out by itself (to an outgoing connection's local
// end, to a bind on port 0); ports.Ephemeral is one.
type EphemeralPorts interface {
	// Overlap is the ports of r it may hand out, as runs [lo, hi].
	Overlap(r [2]int) [][2]int
	// Fix says how to end an overlap with r.
	Fix(r [2]int) string
	// String names the range and where it was read.
	String() string
}

// CheckPortRange is what `binky check` adds for port_range: a warning when
// the project's port_range — binky's default range def, when it sets none
// — overlaps eph, because any program's outgoing connection can then take
// a world's port (while the world is down, or before its service binds),
// and the world's next up has to move. The warning names both ranges, the
// ports they share, and the fix. name is the file name the diagnostic
// carries; nil eph (not known here) checks nothing.
func CheckPortRange(name string, cfg *Config, def [2]int, eph EphemeralPorts) Diagnostics {
	if cfg == nil || eph == nil {
		return nil
	}
	r, what, line := cfg.Project.PortRange, "project.port_range", cfg.Line("project", "port_range")
	if r[1] == 0 {
		r, what, line = def, "binky's default port range", cfg.Line("project")
	}
	shared := eph.Overlap(r)
	if len(shared) == 0 {
		return nil
	}
	where := "lies inside " + eph.String()
	if len(shared) != 1 || shared[0] != r {
		runs := make([]string, len(shared))
		for i, s := range shared {
			runs[i] = portRun(s)
		}
		where = fmt.Sprintf("overlaps %s at ports %s", eph, strings.Join(runs, ", "))
	}
	return Diagnostics{{File: name, Line: line, Severity: SeverityWarning,
		Message: fmt.Sprintf("%s %s %s: an outgoing connection of any program can take a world's port, and its next up has to move",
			what, portRun(r), where),
		Hint: eph.Fix(r)}}
}

// portRun writes [lo, hi] as "lo-hi", or "lo" for one port.
func portRun(r [2]int) string {
	if r[0] == r[1] {
		return strconv.Itoa(r[0])
	}
	return strconv.Itoa(r[0]) + "-" + strconv.Itoa(r[1])
}
