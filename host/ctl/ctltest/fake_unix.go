//go:build !windows

package ctltest

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// OnStop is what a Fake does when asked to stop.
type OnStop int

const (
	// Exit closes the socket and releases the lock, as a daemon does.
	Exit OnStop = iota
	// Hang answers, stops listening and keeps the lock: a daemon whose
	// shutdown waits on something that never ends (a request blocked on
	// a FIFO).
	Hang
	// Ignore answers and keeps serving and holding the lock.
	Ignore
	// Wedge never answers the stop (a daemon whose every thread is stuck,
	// or SIGSTOPped after it answered a ping) and keeps the lock.
	Wedge
)

// Fake is a stand-in daemon for one BINKY_HOME.
type Fake struct {
	Home string
	Pid  int

	on   OnStop
	lock *os.File
	ln   net.Listener
	mu   sync.Mutex
	done bool
	// Stopped is closed when the fake has been asked to stop.
	Stopped chan struct{}
	stopped sync.Once
	closed  chan struct{}
}

// HoldLock takes home's daemon.pid lock as a daemon does, writing pid in
// it, and returns the file; closing it releases the lock.
func HoldLock(t testing.TB, home string, pid int) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "daemon.pid"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		t.Fatalf("lock daemon.pid: %v", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0)
	t.Cleanup(func() { f.Close() })
	return f
}

// Start starts a Fake for home claiming pid, doing on when stopped. It
// ends with the test.
func Start(t testing.TB, home string, pid int, on OnStop) *Fake {
	t.Helper()
	f := &Fake{Home: home, Pid: pid, on: on, Stopped: make(chan struct{}), closed: make(chan struct{})}
	f.lock = HoldLock(t, home, pid)
	ln, err := net.Listen("unix", api.Socket(home))
	if err != nil {
		t.Fatal(err)
	}
	f.ln = ln
	go f.serve()
	t.Cleanup(f.Close)
	return f
}

// Close stops serving and releases the lock.
func (f *Fake) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.done = true
	close(f.closed)
	f.ln.Close()
	os.Remove(api.Socket(f.Home))
	f.lock.Close()
}

func (f *Fake) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.handle(c)
	}
}

func (f *Fake) handle(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	if !sc.Scan() {
		return
	}
	var req api.Request
	if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
		return
	}
	enc := json.NewEncoder(c)
	switch req.Op {
	case api.OpPing:
		b, _ := json.Marshal(api.PingResult{Pid: f.Pid, Version: "fake", Home: f.Home, Started: time.Now()})
		enc.Encode(api.Frame{Result: b})
	case api.OpStop:
		if f.on == Wedge {
			f.stopped.Do(func() { close(f.Stopped) })
			<-f.closed
			return
		}
		enc.Encode(api.Frame{Result: json.RawMessage(`{}`)})
		f.stopped.Do(func() { close(f.Stopped) })
		switch f.on {
		case Exit:
			f.Close()
		case Hang:
			f.ln.Close()
			os.Remove(api.Socket(f.Home))
		}
	default:
		enc.Encode(api.Frame{Error: &api.Error{Code: api.CodeInvalid, Message: "fake daemon: unknown op " + req.Op}})
	}
}
