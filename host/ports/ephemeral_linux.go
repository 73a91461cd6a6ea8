//go:build linux

package ports

import (
	"context"
	"fmt"
	"os"
	"strings"
)

const (
	localPortRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"
	reservedPortsFile  = "/proc/sys/net/ipv4/ip_local_reserved_ports"
)

// EphemeralRange is the kernel's ephemeral port range
// (net.ipv4.ip_local_port_range) and the ports it reserves from it
// (net.ipv4.ip_local_reserved_ports), for this network namespace.
func EphemeralRange(context.Context) (Ephemeral, error) {
	b, err := os.ReadFile(localPortRangeFile)
	if err != nil {
		return Ephemeral{}, fmt.Errorf("read the ephemeral port range: %w", err)
	}
	r, ok := parseLocalPortRange(string(b))
	if !ok {
		return Ephemeral{}, fmt.Errorf("read the ephemeral port range: %s holds %q", localPortRangeFile, strings.TrimSpace(string(b)))
	}
	var reserved [][2]int
	if b, err := os.ReadFile(reservedPortsFile); err == nil {
		reserved = parseReservedPorts(string(b))
	}
	return Ephemeral{
		Range:    r,
		Reserved: reserved,
		Name:     fmt.Sprintf("the kernel's ephemeral port range %s (%s)", RangeString(r), localPortRangeFile),
		fix:      linuxFix,
	}, nil
}

// linuxFix: keep r and reserve it from the kernel (added to the ports it
// reserves already), or narrow the range.
func linuxFix(r [2]int, e Ephemeral) string {
	list := []string{}
	for _, res := range e.Reserved {
		list = append(list, RangeString(res))
	}
	list = append(list, RangeString(r))
	fix := fmt.Sprintf("keep it and have the kernel leave it alone: sysctl -w net.ipv4.ip_local_reserved_ports=%s, kept across reboots in /etc/sysctl.d/", strings.Join(list, ","))
	if n, ok := narrowed(r, e.Range); ok {
		fix += fmt.Sprintf(", or narrow the range: sysctl -w net.ipv4.ip_local_port_range=\"%d %d\"", n[0], n[1])
	}
	return fix
}
