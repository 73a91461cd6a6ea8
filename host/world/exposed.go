package world

import "github.com/binkyhq/binky/host/listeners"

// exposedWarning is status's warning for a running service whose ports
// listen beyond loopback (listeners.Exposed): reachable from other
// machines. "" when they do not, or when this host cannot tell.
func exposedWarning(ports map[string]int) string {
	if len(ports) == 0 {
		return ""
	}
	socks, err := listeners.Listening(0)
	if err != nil {
		return ""
	}
	ps := make([]int, 0, len(ports))
	for _, p := range ports {
		ps = append(ps, p)
	}
	return listeners.ExposedWarning(listeners.Exposed(socks, ps...))
}
