package supervisor

import "context"

// ExitOf returns a channel closed once process pid, which must carry the
// marker value exactly, has exited: the end of a process that is not this
// daemon's child (a journaled binky run a restarted daemon took over),
// learnt without polling. It is nil when that cannot be watched here (no
// pidfd or process handle) or pid is not, or no longer, that process; the
// caller then polls. When ctx ends the watch stops and the channel stays
// open.
func ExitOf(ctx context.Context, pid int, marker string) <-chan struct{} {
	if pid <= 0 {
		return nil
	}
	// Open the watch before checking the marker: if the marker then
	// matches, the watch names that process, not a successor on its pid.
	w, err := openPidWatch(pid)
	if err != nil {
		return nil
	}
	if !hasMarker(pid, marker) {
		w.close()
		return nil
	}
	exited := make(chan struct{})
	go func() {
		stop := context.AfterFunc(ctx, w.close)
		defer stop()
		if w.wait() == nil {
			close(exited)
		}
		w.close()
	}()
	return exited
}
