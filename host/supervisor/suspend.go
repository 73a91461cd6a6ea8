package supervisor

import (
	"fmt"
)

// Suspend stops every process of a running service's group where it stands
// (SIGSTOP on Unix): it uses no CPU and grows no memory, keeps its ports and
// its pages (which the kernel may reclaim or swap). A service that is not
// running is not an error. The runner sees no exit and restarts nothing.
func (s *Supervisor) Suspend(key Key) error { return s.pause(key, true) }

// Resume continues a suspended service's group (SIGCONT on Unix).
func (s *Supervisor) Resume(key Key) error { return s.pause(key, false) }

func (s *Supervisor) pause(key Key, stop bool) error {
	s.mu.Lock()
	u := s.units[key]
	var pgid int
	if u != nil && u.run != nil && !u.run.hasExited() {
		pgid = u.run.pgid
	}
	s.mu.Unlock()
	if pgid == 0 {
		return nil
	}
	if err := pauseService(key, pgid, stop); err != nil {
		verb := "suspend"
		if !stop {
			verb = "resume"
		}
		return fmt.Errorf("%s %s: %w", verb, key, err)
	}
	return nil
}

// PauseMarked stops (or continues) every live process whose marker starts
// with prefix (see WorldMarker): what a world runs outside its services'
// groups, such as a descendant that escaped into a session of its own.
// Linux finds them by environment, Windows in the world's service jobs;
// elsewhere it does nothing.
func PauseMarked(prefix string, stop bool) {
	for _, p := range markedPrefix(prefix) {
		_ = pausePid(p, stop)
	}
}
