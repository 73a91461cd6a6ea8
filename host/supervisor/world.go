package supervisor

import (
	"strings"
	"syscall"
	"time"
)

// WorldMarker is the marker prefix every process of one world of one home
// carries: "<home id>/<project>/<worktree>/". Its services' markers are
// WorldMarker+service, and a migrate or seed of a service is marked
// WorldMarker+service+"#migrate" (see HookMarker). A process marked by
// another home, or by a binky older than home ids (no home part), never
// matches. With no home id (tests of this package) it is the old
// "<project>/<worktree>/".
func WorldMarker(home, project, worktree string) string {
	if home == "" {
		return project + "/" + worktree + "/"
	}
	return home + "/" + project + "/" + worktree + "/"
}

// HookMarker is the marker value of a migrate or seed run of a service.
func HookMarker(home, project, worktree, service, step string) string {
	return WorldMarker(home, project, worktree) + service + "#" + step
}

// HookRuns lists the live one-shot runs (migrate, seed, setup, verify:
// markers with a "#step") of worlds whose marker starts with prefix (a
// WorldMarker, or a home id and "/" for every world of a home), as pid →
// marker. A daemon that starts finds here what a killed one left running.
// Only Linux can tell (on Windows one-shot runs are in jobs that die with
// the daemon: host/internal/winjob.Run); elsewhere it is empty.
func HookRuns(prefix string) map[int]string {
	out := map[int]string{}
	for pid, m := range markerValues(prefix) {
		if strings.Contains(m[len(prefix):], "#") {
			out[pid] = m
		}
	}
	return out
}

// MarkedProcesses lists the live processes whose marker starts with prefix
// (see WorldMarker): what a world still runs, whether or not this
// supervisor started or adopted it. Linux reads environments; Windows
// lists the world's service jobs (host/internal/winjob); elsewhere it is
// empty.
func MarkedProcesses(prefix string) []int { return markedPrefix(prefix) }

// MarkerValues maps each live process whose marker starts with prefix
// to its marker (see WorldMarker): one look at every process, which a
// caller sorts into worlds itself. Empty where MarkedProcesses is.
func MarkerValues(prefix string) map[int]string { return markerValues(prefix) }

// EndMarked ends every live process whose marker starts with prefix: sig,
// then SIGKILL for what is left after grace. It returns the pids still alive
// after that (a process in uninterruptible sleep can outlast SIGKILL for a
// while).
func EndMarked(prefix string, sig syscall.Signal, grace time.Duration) []int {
	pids := markedPrefix(prefix)
	if len(pids) == 0 {
		return nil
	}
	for _, p := range pids {
		_ = signalPid(p, sig)
	}
	if left := waitMarkedGone(prefix, grace); len(left) == 0 {
		return nil
	}
	for _, p := range markedPrefix(prefix) {
		_ = signalPid(p, killSignal)
	}
	return waitMarkedGone(prefix, killWait)
}

// waitMarkedGone waits up to d for no process marked with prefix to be left,
// and returns those that are.
func waitMarkedGone(prefix string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	step := 5 * time.Millisecond
	for {
		left := markedPrefix(prefix)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(step)
		step = min(step*2, 100*time.Millisecond)
	}
}

// endStrays ends processes that carry spec's exact marker although this
// supervisor runs no process of it: one a daemon started and was killed
// before it could record it. Starting beside them would run the service
// twice.
func (s *Supervisor) endStrays(u *unit, spec Spec) {
	pids := markedProcesses(spec.Key.Marker())
	if len(pids) == 0 {
		return
	}
	u.log.Warn("ending processes of this service that no daemon recorded", "pids", pids)
	sig, _ := ParseSignal(spec.StopSignal)
	for _, p := range pids {
		_ = signalPid(p, sig)
	}
	deadline := time.Now().Add(spec.StopTimeout)
	for time.Now().Before(deadline) && len(markedProcesses(spec.Key.Marker())) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range markedProcesses(spec.Key.Marker()) {
		_ = signalPid(p, killSignal)
	}
}
