package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binkyhq/binky/internal/testport"
	"github.com/binkyhq/binky/internal/wine"
)

func statusServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if status >= 300 && status < 400 {
			http.Redirect(w, r, "/broken", status)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedPort is a loopback address that refuses connections, held for
// the test (a port freed by closing a listener can be handed to another
// parallel test's listener, and the probe would pass).
func closedPort(t *testing.T) string { return testport.Closed(t) }

func TestCheckHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		wantErr string
	}{
		{200, ""},
		{204, ""},
		{302, ""}, // not followed: /broken would answer 500
		{307, ""},
		{404, "404 Not Found"},
		{503, "503 Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			srv := statusServer(t, tt.status)
			err := Check(context.Background(), Probe{HTTP: srv.URL + "/healthz"})
			if got := errText(err); got != tt.wantErr {
				t.Errorf("Check(%d) = %q; want %q", tt.status, got, tt.wantErr)
			}
		})
	}
}

func TestCheckTCP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := Check(context.Background(), Probe{TCP: ln.Addr().String()}); err != nil {
		t.Errorf("Check(listening) = %v; want nil", err)
	}
	err = Check(context.Background(), Probe{TCP: closedPort(t)})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Check(closed) = %v; want connection refused", err)
	}
}

func TestCheckExec(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("probe commands below are sh")
	}
	dir := t.TempDir()
	tests := []struct {
		name, cmd string
		env       []string
		wantErr   string
	}{
		{"ok", "exit 0", nil, ""},
		{"fails with its last line", "echo one; echo boom >&2; exit 3", nil, "exit status 3: boom"},
		{"dir and env", `test "$(pwd)" = "` + dir + `" && test "$X" = y`, []string{"X=y"}, ""},
		{"env is complete", `test -z "$HOME"`, []string{"X=y"}, ""},
		{"missing command", "no-such-command-binky", nil, "exit status 127"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Check(context.Background(), Probe{Exec: tt.cmd, Dir: dir, Env: tt.env})
			got := errText(err)
			if tt.wantErr == "" && got != "" || !strings.HasPrefix(got, tt.wantErr) {
				t.Errorf("Check(%q) = %q; want %q", tt.cmd, got, tt.wantErr)
			}
		})
	}
}

func TestCheckInvalid(t *testing.T) {
	t.Parallel()
	if err := Check(context.Background(), Probe{}); !errors.Is(err, ErrNoProbe) {
		t.Errorf("Check(empty) = %v; want ErrNoProbe", err)
	}
	if err := Check(context.Background(), Probe{HTTP: "http://x", TCP: "x:1"}); err == nil {
		t.Errorf("Check(http and tcp) = nil; want an error")
	}
}

func TestWaitBecomesHealthy(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 4 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := Probe{HTTP: srv.URL, Interval: time.Millisecond, Timeout: time.Minute}
	if err := Wait(context.Background(), p, func() error { return nil }); err != nil {
		t.Fatalf("Wait = %v; want nil", err)
	}
	if got := calls.Load(); got != 4 {
		t.Errorf("attempts = %d; want 4", got)
	}
}

func TestWaitTimesOutNamingProbeAndLastFailure(t *testing.T) {
	wine.Skip(t, "a loopback HTTP answer takes longer than the test's 15ms probe timeout")
	t.Parallel()
	srv := statusServer(t, http.StatusServiceUnavailable)
	p := Probe{HTTP: srv.URL + "/healthz", Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond}
	err := Wait(context.Background(), p, nil)
	want := srv.URL + "/healthz: 503 Service Unavailable after 200ms"
	if got := errText(err); got != want {
		t.Errorf("Wait = %q; want %q", got, want)
	}
	var herr *Error
	if !errors.As(err, &herr) || herr.Exit != nil {
		t.Errorf("Wait error = %#v; want *Error without Exit", err)
	}
}

func TestWaitReturnsWhenProcessDies(t *testing.T) {
	t.Parallel()
	exit := errors.New("exit status 2")
	var calls atomic.Int32
	alive := func() error {
		if calls.Add(1) > 3 {
			return exit
		}
		return nil
	}
	p := Probe{TCP: closedPort(t), Interval: time.Millisecond, Timeout: time.Hour}
	err := Wait(context.Background(), p, alive)
	if !errors.Is(err, ErrExited) || !errors.Is(err, exit) {
		t.Fatalf("Wait = %v; want ErrExited wrapping %v", err, exit)
	}
	if !strings.HasPrefix(err.Error(), "tcp "+p.TCP+": exit status 2 after ") {
		t.Errorf("Wait = %q; want it to name the probe and the exit", err)
	}
}

func TestWaitHungExecIsBounded(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("sh probe")
	}
	p := Probe{Exec: "sleep 30", Interval: 10 * time.Millisecond, Timeout: 300 * time.Millisecond}
	err := Wait(context.Background(), p, nil)
	if err == nil || !strings.Contains(err.Error(), `exec "sleep 30": `) || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("Wait = %v; want a timeout naming the probe", err)
	}
}

func TestWaitCallerCancels(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Wait(ctx, Probe{TCP: closedPort(t), Timeout: time.Hour}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(cancelled) = %v; want context.Canceled", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A server that first refuses, then accepts and never answers: the timeout
// reports the hang, not the stale refusal.
func TestWaitReportsHangNotStaleRefusal(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused until the hanging server below takes the port
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		hang, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listen again on %s: %v", addr, err)
			return
		}
		defer hang.Close()
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // accepted, never answered
			mu.Unlock()
			if len(conns) > 50 {
				return
			}
		}
	}()
	p := Probe{HTTP: "http://" + addr + "/healthz", Timeout: 2500 * time.Millisecond, Interval: 50 * time.Millisecond}
	err = Wait(context.Background(), p, nil)
	if err == nil {
		t.Fatal("Wait passed against a server that never answers")
	}
	msg := err.Error()
	if strings.Contains(msg, "refused") || !strings.Contains(msg, "no answer within") {
		t.Errorf("Wait error = %q; want the hang (no answer within …), not a stale refusal", msg)
	}
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
}

// The pauses between attempts: eager (≤ 2 ms) while the service is very
// young, ≤ 10 ms while young, then doubling up to the interval, never
// above it.
func TestNextGap(t *testing.T) {
	gap, since := firstGap, time.Duration(0)
	var eager, young []time.Duration
	for since < youngFor {
		gap = nextGap(gap, since, time.Second)
		if since < eagerFor {
			eager = append(eager, gap)
			if gap > eagerGap {
				t.Fatalf("gap %s at %s; want at most %s while very young", gap, since, eagerGap)
			}
		} else {
			young = append(young, gap)
			if gap > youngGap {
				t.Fatalf("gap %s at %s; want at most %s while young", gap, since, youngGap)
			}
		}
		since += gap
	}
	if eager[0] != min(2*firstGap, eagerGap) || eager[len(eager)-1] != eagerGap {
		t.Errorf("very young gaps %v; want %s doubling to %s", eager[:4], 2*firstGap, eagerGap)
	}
	if young[len(young)-1] != youngGap {
		t.Errorf("young gaps end at %s; want %s", young[len(young)-1], youngGap)
	}
	for range 10 {
		gap = nextGap(gap, since, time.Second)
		since += gap
	}
	if gap != time.Second {
		t.Errorf("gap after 10 more attempts = %s; want the interval 1s", gap)
	}
	if g := nextGap(5*time.Millisecond, time.Second, 2*time.Millisecond); g != 2*time.Millisecond {
		t.Errorf("gap with a 2ms interval = %s; want 2ms", g)
	}
}
