package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/internal/winjob"
)

// Defaults applied when a Probe leaves Timeout or Interval at zero.
const (
	DefaultTimeout  = 60 * time.Second // config.DefaultHealthTimeout; docs/supervision.md
	DefaultInterval = 500 * time.Millisecond
	// maxAttempt bounds one attempt, so a probe that hangs (a server that
	// accepts and never answers) is retried instead of eating the timeout.
	maxAttempt = 5 * time.Second
)

// ErrNoProbe is returned for a Probe with none of HTTP, TCP or Exec set.
var ErrNoProbe = errors.New("health probe has none of http, tcp or exec")

// Probe says how to tell that a service is ready. Exactly one of HTTP, TCP and
// Exec is set.
type Probe struct {
	HTTP string // URL to GET; 2xx and 3xx pass, redirects are not followed
	TCP  string // host:port to connect to
	Exec string // shell command (sh -c, cmd /C on Windows) that must exit 0

	Dir string   // working directory of Exec
	Env []string // complete environment of Exec; nil inherits the daemon's

	Timeout  time.Duration // how long Wait keeps trying; DefaultTimeout if 0
	Interval time.Duration // pause between attempts; DefaultInterval if 0
}

// String names the probe the way errors and events show it.
func (p Probe) String() string {
	switch {
	case p.HTTP != "":
		return p.HTTP
	case p.TCP != "":
		return "tcp " + p.TCP
	case p.Exec != "":
		return fmt.Sprintf("exec %q", p.Exec)
	}
	return "no probe"
}

// Validate reports whether exactly one of HTTP, TCP and Exec is set.
func (p Probe) Validate() error {
	n := 0
	for _, s := range []string{p.HTTP, p.TCP, p.Exec} {
		if s != "" {
			n++
		}
	}
	switch n {
	case 0:
		return ErrNoProbe
	case 1:
		return nil
	}
	return fmt.Errorf("health probe sets more than one of http (%q), tcp (%q) and exec (%q): keep one", p.HTTP, p.TCP, p.Exec)
}

func (p Probe) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

func (p Probe) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return DefaultInterval
}

// Check makes one attempt and returns nil when the probe passes. The error
// says what failed (the status, the refused connection, the exit code),
// without naming the probe; Wait adds that.
func Check(ctx context.Context, p Probe) error {
	_, err := check(ctx, p)
	return err
}

// CheckWith is Check with Options' Owner: an http or tcp attempt that
// connected passes only when Owner accepts the address that answered.
// Alive is not consulted; the attempt is bounded by the probe's attempt
// limit as Wait's are.
func CheckWith(ctx context.Context, p Probe, opts Options) error {
	attempt, stop := context.WithTimeout(ctx, max(p.interval(), maxAttempt))
	defer stop()
	peer, err := check(attempt, p)
	if err == nil && opts.Owner != nil && peer.IsValid() {
		err = opts.Owner(peer)
	}
	return err
}

// check is Check that also reports the address an http or tcp attempt
// connected to (the zero AddrPort for exec, or when no connection was made).
func check(ctx context.Context, p Probe) (netip.AddrPort, error) {
	if err := p.Validate(); err != nil {
		return netip.AddrPort{}, err
	}
	switch {
	case p.HTTP != "":
		return checkHTTP(ctx, p.HTTP)
	case p.TCP != "":
		return checkTCP(ctx, p.TCP)
	default:
		return netip.AddrPort{}, checkExec(ctx, p)
	}
}

func checkHTTP(ctx context.Context, url string) (netip.AddrPort, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("build request: %w", err)
	}
	var mu sync.Mutex
	var peer netip.AddrPort
	var d net.Dialer
	client := &http.Client{
		// A fresh transport per attempt, without keep-alive: a probe leaves no
		// idle connection (and no file descriptor) behind.
		Transport: &http.Transport{
			DisableKeepAlives: true,
			Proxy:             nil,
			ForceAttemptHTTP2: true, // as without a DialContext
			// Remember whom the request reached, for Options.Owner.
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := d.DialContext(ctx, network, addr)
				if err == nil {
					mu.Lock()
					peer = remoteOf(conn)
					mu.Unlock()
				}
				return conn, err
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Do(req)
	mu.Lock()
	reached := peer
	mu.Unlock()
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) && uerr.Unwrap() != nil {
			// Drop the url.Error wrapper: the probe is named by the caller.
			return reached, uerr.Unwrap()
		}
		return reached, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 399 {
		return reached, fmt.Errorf("%s", resp.Status)
	}
	return reached, nil
}

func checkTCP(ctx context.Context, addr string) (netip.AddrPort, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var oerr *net.OpError
		if errors.As(err, &oerr) && oerr.Err != nil {
			return netip.AddrPort{}, oerr.Err
		}
		return netip.AddrPort{}, err
	}
	peer := remoteOf(conn)
	return peer, conn.Close()
}

// remoteOf is the address conn is connected to; zero when it is not TCP.
func remoteOf(conn net.Conn) netip.AddrPort {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

func checkExec(ctx context.Context, p Probe) error {
	cmd := shellCommand(ctx, p.Exec)
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	var out tailBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// Cancel kills the whole group (see the platform files), and WaitDelay
	// stops Wait from hanging on a grandchild that still holds the output.
	// On Windows the probe runs in a job that ends with it (winjob.Run;
	// elsewhere that is cmd.Run).
	cmd.WaitDelay = time.Second
	err := winjob.Run(cmd)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("no answer: %w", ctx.Err())
	}
	if last := out.lastLine(); last != "" {
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}

// tailBuffer keeps the last 4 KiB written to it: enough for the last line of
// a failing health command without holding a chatty one's whole output.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append(t.b[:0], t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	s := strings.TrimRight(string(t.b), "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
