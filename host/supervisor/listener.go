package supervisor

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/listeners"
)

// listenerCheck is the health.Options.Owner hook of run r: the socket that
// answered the probe must be held by one of the service's own processes
// (see owns), else the attempt fails naming the holder, and the wait goes
// on — a service that binds late, after another program let go of the
// port, still becomes healthy. Where the platform cannot tell,
// listeners.Check passes; where it can tell that nothing listens at the
// address any more (the answer came on a connection kept alive from before
// the process let go of its listener), the attempt fails. The hook is a
// listeners.Vetter, made once per
// run: the holder is looked for among the run's own processes (ownPids)
// before any other, and a socket found the service's is not vetted again
// by later probes while it is the one that answers.
//
// A probe answered by this very process went through the daemon's proxy (a
// health URL written with ${svc.url}); the proxy forwards to 127.0.0.1 at
// the service's port, so the listener there is judged instead ($PORT of the
// service's environment; without one the answer is taken at its word).
func listenerCheck(spec Spec, r *run) func(netip.AddrPort) error {
	marker := markerValue(spec)
	port := envPort(spec)
	mine := func(pid int) bool { return r.owns(pid, marker) }
	v := listeners.NewVetter(mine, func() []int { return ownPids(r) })
	return func(addr netip.AddrPort) error {
		err := v.CheckListening(addr)
		var fe *listeners.ForeignError
		if !errors.As(err, &fe) || fe.Pid != os.Getpid() {
			return err
		}
		if port <= 0 || port == int(addr.Port()) {
			return nil
		}
		return v.CheckListening(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)))
	}
}

// owns reports whether pid is one of the run's processes: the process
// itself, a live member of its process group, a process in the cgroup it
// was started in (the world's: any of the world's processes counts), or a
// descendant that left the group but carries the service's marker
// (MarkerEnv=marker) in its environment.
func (r *run) owns(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	if pid == r.pid {
		return true
	}
	if st, err := readStat(pid); err == nil && !st.dead() && r.pgid > 0 && st.Pgrp == r.pgid {
		return true
	}
	if r.cgroup != "" && cgroupOf(pid) == r.cgroup {
		return true
	}
	return marker != "" && hasMarker(pid, marker)
}

// markerValue is the value MarkerEnv has in the service's environment, as
// spawn sets it.
func markerValue(spec Spec) string { return envValue(spec.env(), MarkerEnv) }

// envPort is the service's $PORT, or 0.
func envPort(spec Spec) int {
	p, err := strconv.Atoi(envValue(spec.Env, "PORT"))
	if err != nil || p < 1 || p > 65535 {
		return 0
	}
	return p
}

// envValue is the last value of name in env, or "".
func envValue(env []string, name string) string {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], prefix); ok {
			return v
		}
	}
	return ""
}

// moved is an error wrapping ErrPortChanged when spec would have u's
// running service listen ($PORT) or be probed (an http or tcp probe)
// elsewhere than its process was started with (u.spec); nil when the
// address is the same. Called with Supervisor.mu held.
func (u *unit) moved(spec Spec) error {
	by := ""
	if r := u.run; r != nil && r.pid > 0 && !r.hasExited() {
		by = fmt.Sprintf(" (pid %d)", r.pid)
	}
	if was, now := envPort(u.spec), envPort(spec); was != now {
		return fmt.Errorf("start %s: it runs%s on %s, this start asks for %s: %w", spec.Key, by, portName(was), portName(now), ErrPortChanged)
	}
	if was, now := probeAddress(u.spec), probeAddress(spec); was != now {
		return fmt.Errorf("start %s: it runs%s probed at %s, this start asks for %s: %w", spec.Key, by, was, now, ErrPortChanged)
	}
	return nil
}

func portName(p int) string {
	if p == 0 {
		return "no port"
	}
	return "port " + strconv.Itoa(p)
}

// probeAddress is where spec's http or tcp probe reaches; "no address"
// for an exec probe or none.
func probeAddress(spec Spec) string {
	if h := spec.Health; h != nil && (h.HTTP != "" || h.TCP != "") {
		return h.String()
	}
	return "no address"
}
