package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// ownerHook records the addresses it is asked about and fails the first
// fails calls.
type ownerHook struct {
	mu    sync.Mutex
	asked []netip.AddrPort
	fails int
}

func (o *ownerHook) check(addr netip.AddrPort) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked = append(o.asked, addr)
	if len(o.asked) <= o.fails {
		return errors.New("port is answered by pid 4242 (python3 -m http.server), not by this service")
	}
	return nil
}

func (o *ownerHook) calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.asked)
}

// TestWaitOwnerRetries: an attempt the Owner hook refuses is a failed
// attempt; the wait goes on and passes once the hook accepts.
func TestWaitOwnerRetries(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	srv := statusServer(t, http.StatusOK)
	for _, p := range []Probe{{TCP: ln.Addr().String()}, {HTTP: srv.URL + "/healthz"}} {
		p.Interval, p.Timeout = time.Millisecond, time.Hour
		hook := &ownerHook{fails: 3}
		if err := WaitWith(context.Background(), p, Options{Owner: hook.check}); err != nil {
			t.Fatalf("WaitWith(%s) = %v; want nil once the hook accepts", p, err)
		}
		if got := hook.calls(); got != 4 {
			t.Errorf("%s: hook asked %d times; want 4", p, got)
		}
		want := ln.Addr().(*net.TCPAddr).AddrPort()
		if p.HTTP != "" {
			want = srv.Listener.Addr().(*net.TCPAddr).AddrPort()
		}
		for _, a := range hook.asked {
			if a != want {
				t.Errorf("%s: hook asked about %s; want %s", p, a, want)
			}
		}
	}
}

// TestWaitOwnerFailureIsNamed: when the wait ends while the hook refuses,
// the error carries the hook's message.
func TestWaitOwnerFailureIsNamed(t *testing.T) {
	t.Parallel()
	srv := statusServer(t, http.StatusOK)
	hook := &ownerHook{fails: 1 << 30}
	exit := errors.New("exit status 1")
	alive := func() error {
		if hook.calls() >= 2 { // it died after two refused attempts
			return exit
		}
		return nil
	}
	p := Probe{HTTP: srv.URL, Interval: time.Millisecond, Timeout: time.Hour}
	err := WaitWith(context.Background(), p, Options{Alive: alive, Owner: hook.check})
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "(last probe failure: port is answered by pid 4242 (python3 -m http.server), not by this service)") {
		t.Errorf("WaitWith = %v; want the exit with the hook's refusal as the last failure", err)
	}
}

// TestWaitOwnerNotAskedWithoutAnswer: the hook judges only attempts that
// passed: not a refused connection, not a failing status, not an exec
// probe.
func TestWaitOwnerNotAskedWithoutAnswer(t *testing.T) {
	t.Parallel()
	srv := statusServer(t, http.StatusServiceUnavailable)
	probes := []Probe{{TCP: closedPort(t)}, {HTTP: srv.URL}}
	if runtime.GOOS != "windows" {
		probes = append(probes, Probe{Exec: "exit 0"})
	}
	for _, p := range probes {
		hook := &ownerHook{fails: 1 << 30}
		var n int
		alive := func() error {
			if n++; n > 3 {
				return errors.New("gone")
			}
			return nil
		}
		p.Interval, p.Timeout = time.Millisecond, time.Hour
		err := WaitWith(context.Background(), p, Options{Alive: alive, Owner: hook.check})
		if p.Exec != "" {
			if err != nil {
				t.Errorf("WaitWith(%s) = %v; want nil (exec probes are not vetted)", p, err)
			}
		} else if !errors.Is(err, ErrExited) {
			t.Errorf("WaitWith(%s) = %v; want ErrExited", p, err)
		}
		if got := hook.calls(); got != 0 {
			t.Errorf("WaitWith(%s) asked the hook %d times; want 0", p, got)
		}
	}
}

// Wait is WaitWith without a hook: a plain answer passes.
func TestWaitIsWaitWith(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	if err := Wait(context.Background(), Probe{HTTP: srv.URL, Timeout: time.Hour}, nil); err != nil {
		t.Errorf("Wait = %v; want nil", err)
	}
}
