//go:build windows

package supervisor

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/windows"
)

var errWatchClosed = errors.New("process watch closed")

// pidWatch learns of the exit of a process through a handle to it
// (SYNCHRONIZE): the handle pins the process, so its pid names that very
// process for as long as the watch is open, and its creation time can be
// checked after. wait blocks one thread, as os.Process.Wait does on
// Windows; close wakes it through an event.
type pidWatch struct {
	mu      sync.Mutex
	proc    windows.Handle
	stop    windows.Handle
	waiting bool
	closed  bool
}

// openPidWatch opens a handle to pid. It must be opened before the caller
// checks the start time (as a pidfd on Linux).
func openPidWatch(pid int) (*pidWatch, error) {
	p, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return nil, fmt.Errorf("open process %d: %w", pid, err)
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(p)
		return nil, fmt.Errorf("watch process %d: %w", pid, err)
	}
	return &pidWatch{proc: p, stop: ev}, nil
}

// wait blocks until the process exits (nil) or close is called (an error).
func (w *pidWatch) wait() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errWatchClosed
	}
	w.waiting = true
	w.mu.Unlock()
	ev, err := windows.WaitForMultipleObjects([]windows.Handle{w.proc, w.stop}, false, windows.INFINITE)
	w.mu.Lock()
	w.waiting = false
	if w.closed {
		w.free()
	}
	w.mu.Unlock()
	switch {
	case err != nil:
		return fmt.Errorf("wait for process: %w", err)
	case ev == windows.WAIT_OBJECT_0:
		return nil
	}
	return errWatchClosed
}

// close wakes wait and releases the handles (once no wait uses them).
func (w *pidWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	windows.SetEvent(w.stop)
	if !w.waiting {
		w.free()
	}
}

func (w *pidWatch) free() {
	windows.CloseHandle(w.proc)
	windows.CloseHandle(w.stop)
}
