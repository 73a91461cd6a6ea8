package ports

import (
	"fmt"
	"strconv"
	"strings"
)

// Ephemeral is the range of ports the operating system hands out by
// itself: to an outgoing connection's local end, and to a listener bound
// on port 0. A world's port inside it can be taken by any program's
// connection while the world is down, or before its service binds (a
// health poller once connected to itself that way), so `binky check` and
// `binky doctor` warn when a port_range overlaps it.
type Ephemeral struct {
	// Range is [lo, hi], both inclusive.
	Range [2]int
	// Reserved are runs inside it the system never hands out (Linux's
	// net.ipv4.ip_local_reserved_ports), each [lo, hi].
	Reserved [][2]int
	// Name says what the range is and where it was read: "the kernel's
	// ephemeral port range 32768-60999
	// (/proc/sys/net/ipv4/ip_local_port_range)".
	Name string
	// fix says how the range itself could be changed, for Fix.
	fix func(r [2]int, e Ephemeral) string
}

// String is Name.
func (e Ephemeral) String() string { return e.Name }

// Overlap is the ports of r the system may hand out: r inside Range,
// without Reserved, as ascending runs [lo, hi]; nil when there are none.
func (e Ephemeral) Overlap(r [2]int) [][2]int {
	lo, hi := max(r[0], e.Range[0]), min(r[1], e.Range[1])
	if lo > hi {
		return nil
	}
	runs := [][2]int{{lo, hi}}
	for _, res := range e.Reserved {
		var next [][2]int
		for _, run := range runs {
			if res[1] < run[0] || res[0] > run[1] {
				next = append(next, run)
				continue
			}
			if res[0] > run[0] {
				next = append(next, [2]int{run[0], res[0] - 1})
			}
			if res[1] < run[1] {
				next = append(next, [2]int{res[1] + 1, run[1]})
			}
		}
		runs = next
	}
	return runs
}

// Fix says how to end an overlap of r with e: a range of r's width outside
// e, and, where the system allows it, how to keep r and have the system
// leave it alone.
func (e Ephemeral) Fix(r [2]int) string {
	width := r[1] - r[0] + 1
	var out []string
	switch {
	case e.Range[0]-width >= 1024:
		out = append(out, fmt.Sprintf("move port_range below it, e.g. port_range = [%d, %d]", e.Range[0]-width, e.Range[0]-1))
	case e.Range[1]+width <= 65535:
		out = append(out, fmt.Sprintf("move port_range above it, e.g. port_range = [%d, %d]", e.Range[1]+1, e.Range[1]+width))
	default:
		out = append(out, "move port_range out of it")
	}
	if e.fix != nil {
		if f := e.fix(r, e); f != "" {
			out = append(out, f)
		}
	}
	return strings.Join(out, ", or ")
}

// RangeString writes r as "20000-29999".
func RangeString(r [2]int) string { return strconv.Itoa(r[0]) + "-" + strconv.Itoa(r[1]) }

// RunsString writes runs as "32768-33000, 40000-40100".
func RunsString(runs [][2]int) string {
	s := make([]string, len(runs))
	for i, r := range runs {
		s[i] = RangeString(r)
	}
	return strings.Join(s, ", ")
}

// parseLocalPortRange reads /proc/sys/net/ipv4/ip_local_port_range: two
// port numbers separated by blanks, lo <= hi.
func parseLocalPortRange(s string) ([2]int, bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return [2]int{}, false
	}
	lo, ok1 := portNumber(f[0])
	hi, ok2 := portNumber(f[1])
	if !ok1 || !ok2 || lo > hi {
		return [2]int{}, false
	}
	return [2]int{lo, hi}, true
}

// parseReservedPorts reads /proc/sys/net/ipv4/ip_local_reserved_ports:
// comma-separated ports and lo-hi runs, or nothing. Items it cannot read
// are skipped.
func parseReservedPorts(s string) [][2]int {
	var out [][2]int
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		item = strings.TrimSpace(item)
		a, b, isRun := strings.Cut(item, "-")
		lo, ok := portNumber(a)
		hi := lo
		if isRun {
			var ok2 bool
			hi, ok2 = portNumber(b)
			ok = ok && ok2 && lo <= hi
		}
		if ok {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// parseDynamicPort reads what `netsh int ipv4 show dynamicport tcp` prints:
//
//	Protocol tcp Dynamic Port Range
//	---------------------------------
//	Start Port      : 49152
//	Number of Ports : 16384
//
// The labels are translated on other Windows languages, so the first two
// numbers after a colon are taken, in that order.
func parseDynamicPort(s string) ([2]int, bool) {
	var nums []int
	for _, line := range strings.Split(s, "\n") {
		_, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		if nums = append(nums, n); len(nums) == 2 {
			break
		}
	}
	if len(nums) != 2 || nums[1] < 1 {
		return [2]int{}, false
	}
	lo, hi := nums[0], nums[0]+nums[1]-1
	if lo < 1 || hi > 65535 {
		return [2]int{}, false
	}
	return [2]int{lo, hi}, true
}

// portNumber reads a decimal port, 1-65535.
func portNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s != strconv.Itoa(n) {
		return 0, false
	}
	return n, true
}

// narrowed is e's range without r, when r overlaps one of its ends only:
// the range a system setting could take instead. ok is false when r lies
// inside it, or covers it.
func narrowed(r [2]int, e [2]int) (out [2]int, ok bool) {
	switch {
	case r[0] <= e[0] && r[1] < e[1]:
		return [2]int{r[1] + 1, e[1]}, true
	case r[1] >= e[1] && r[0] > e[0]:
		return [2]int{e[0], r[0] - 1}, true
	}
	return [2]int{}, false
}
