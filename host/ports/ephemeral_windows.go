//go:build windows

package ports

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Windows' default dynamic port range, 49152-65535 (since Vista; the
// registry holds no value until it is changed).
const windowsDynamicLo, windowsDynamicHi = 49152, 65535

// EphemeralRange is Windows' dynamic port range for TCP over IPv4, as
// `netsh int ipv4 show dynamicport tcp` prints it; when netsh cannot be
// asked, Windows' default, 49152-65535, and the name says so.
func EphemeralRange(ctx context.Context) (Ephemeral, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "netsh", "int", "ipv4", "show", "dynamicport", "tcp").Output()
	r, ok := parseDynamicPort(string(out))
	name := fmt.Sprintf("Windows' dynamic port range %s (netsh int ipv4 show dynamicport tcp)", RangeString(r))
	if err != nil || !ok {
		r = [2]int{windowsDynamicLo, windowsDynamicHi}
		name = fmt.Sprintf("Windows' dynamic port range %s (its default: netsh int ipv4 show dynamicport tcp could not be read)", RangeString(r))
	}
	return Ephemeral{Range: r, Name: name, fix: windowsFix}, nil
}

// windowsFix: narrow the dynamic range, when r overlaps one of its ends
// and at least 255 ports (Windows' minimum) remain.
func windowsFix(r [2]int, e Ephemeral) string {
	n, ok := narrowed(r, e.Range)
	if !ok || n[1]-n[0]+1 < 255 {
		return ""
	}
	return fmt.Sprintf("narrow the dynamic range (as administrator): netsh int ipv4 set dynamicport tcp start=%d num=%d", n[0], n[1]-n[0]+1)
}
