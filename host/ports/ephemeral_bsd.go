//go:build darwin || freebsd

package ports

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"
)

// EphemeralRange is the system's ephemeral port range, from the sysctls
// net.inet.ip.portrange.first and .last.
func EphemeralRange(context.Context) (Ephemeral, error) {
	first, err1 := unix.SysctlUint32("net.inet.ip.portrange.first")
	last, err2 := unix.SysctlUint32("net.inet.ip.portrange.last")
	if err1 != nil || err2 != nil {
		return Ephemeral{}, fmt.Errorf("read the ephemeral port range: %v %v", err1, err2)
	}
	r := [2]int{int(min(first, last)), int(max(first, last))}
	return Ephemeral{
		Range: r,
		Name:  fmt.Sprintf("the system's ephemeral port range %s (sysctl net.inet.ip.portrange.first and .last)", RangeString(r)),
		fix:   bsdFix,
	}, nil
}

// bsdFix: narrow the range, when r overlaps one of its ends.
func bsdFix(r [2]int, e Ephemeral) string {
	n, ok := narrowed(r, e.Range)
	if !ok {
		return ""
	}
	return fmt.Sprintf("narrow the range: sudo sysctl -w net.inet.ip.portrange.first=%d net.inet.ip.portrange.last=%d", n[0], n[1])
}
