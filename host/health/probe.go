package health

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
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
	pr := newProber(p, false)
	defer pr.Close()
	_, err := pr.attempt(ctx)
	return err
}

// CheckWith is Check with Options' Owner: an http or tcp attempt that
// connected passes only when Owner accepts the address that answered.
// Alive is not consulted; the attempt is bounded by the probe's attempt
// limit as Wait's are.
func CheckWith(ctx context.Context, p Probe, opts Options) error {
	pr := newProber(p, false)
	defer pr.Close()
	return pr.Check(ctx, opts)
}

// Prober makes the attempts of one probe for one process of a service: the
// supervisor holds one per run, for its start-up wait and the periodic
// probes after it. An http probe's connection is kept alive between
// attempts (one idle connection at most, to the probe's own address), so a
// steady probe costs a request, not a connect, a request and a close; a
// kept-alive connection that fails (the process died, or closed it) is
// given up and the request is made once more on a fresh connection, which
// is what decides the attempt. A Prober is never used across a restart or
// a port change: a new process gets a new Prober. Close drops the idle
// connection; the Prober stays usable (the next attempt connects afresh).
//
// Attempts of one Prober run one at a time.
type Prober struct {
	p    Probe
	keep bool

	mu    sync.Mutex // one attempt at a time; guards peer
	tr    *http.Transport
	url   *url.URL
	uerr  error // the probe's URL does not parse
	trace *httptrace.ClientTrace
	d     net.Dialer
	peer  netip.AddrPort // the address the current attempt's connection reached

	// A plain http:// probe with keep-alive is made on one connection the
	// Prober keeps itself (kept.go); tr serves the others.
	dial    string // host:port; "" when tr makes the attempts
	request []byte
	conn    net.Conn // the kept connection; nil when none
	br      *bufio.Reader
	read    int64 // bytes read in the current attempt
}

// NewProber returns a Prober for p whose http connection is kept alive
// between attempts. Close it when the process it probes is gone.
func NewProber(p Probe) *Prober { return newProber(p, true) }

// idleFor is how long a Prober's idle connection is kept: longer than the
// supervisor's probe interval (DefaultHealthEvery, 5 s), so a steady
// monitor reuses it.
const idleFor = 30 * time.Second

func newProber(p Probe, keep bool) *Prober {
	pr := &Prober{p: p, keep: keep}
	if p.HTTP == "" {
		return pr
	}
	pr.url, pr.uerr = url.Parse(p.HTTP)
	if pr.uerr == nil && pr.url.Host == "" {
		pr.uerr = fmt.Errorf("no host in %q", p.HTTP)
	}
	if pr.uerr == nil && keep {
		pr.dial, pr.request, _ = keptTarget(pr.url)
	}
	pr.tr = &http.Transport{
		// Without keep-alive a probe leaves no idle connection (and no
		// file descriptor) behind; with it, at most one.
		DisableKeepAlives:   !keep,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     idleFor,
		DisableCompression:  true, // the body is thrown away
		Proxy:               nil,
		ForceAttemptHTTP2:   true, // as without a DialContext
		DialContext:         pr.d.DialContext,
	}
	// Remember whom the request reached, for Options.Owner: the connection
	// the transport picked, new or kept alive.
	pr.trace = &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		pr.peer = remoteOf(info.Conn)
	}}
	return pr
}

// Close drops the Prober's idle connection, if it holds one.
func (pr *Prober) Close() {
	if pr.tr != nil {
		pr.tr.CloseIdleConnections()
	}
	pr.mu.Lock()
	pr.dropConn()
	pr.mu.Unlock()
}

// Check is CheckWith on the Prober: one attempt, bounded by the probe's
// attempt limit, vetted by opts.Owner; Alive is not consulted.
func (pr *Prober) Check(ctx context.Context, opts Options) error {
	limit := max(pr.p.interval(), maxAttempt)
	var peer netip.AddrPort
	var err error
	if pr.dial != "" && pr.p.Validate() == nil {
		// Bounded by the connection's deadline: no timer of its own.
		pr.mu.Lock()
		peer, err = pr.checkKept(ctx, time.Now().Add(limit))
		pr.mu.Unlock()
	} else {
		attempt, stop := context.WithTimeout(ctx, limit)
		peer, err = pr.attempt(attempt)
		stop()
	}
	if err == nil && opts.Owner != nil && peer.IsValid() {
		err = opts.Owner(peer)
	}
	return err
}

// attempt makes one attempt and also reports the address an http or tcp
// attempt connected to (the zero AddrPort for exec, or when no connection
// was made).
func (pr *Prober) attempt(ctx context.Context) (netip.AddrPort, error) {
	p := pr.p
	if err := p.Validate(); err != nil {
		return netip.AddrPort{}, err
	}
	switch {
	case p.HTTP != "":
		return pr.checkHTTP(ctx)
	case p.TCP != "":
		return checkTCP(ctx, p.TCP)
	default:
		return netip.AddrPort{}, checkExec(ctx, p)
	}
}

// bodyKept is how much of an answer's body is read so that its connection
// can carry the next attempt; a longer body is not read, and its
// connection is closed.
const bodyKept = 16 << 10

func (pr *Prober) checkHTTP(ctx context.Context) (netip.AddrPort, error) {
	if pr.uerr != nil {
		return netip.AddrPort{}, fmt.Errorf("build request: %w", pr.uerr)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.dial != "" {
		deadline := time.Now().Add(max(pr.p.interval(), maxAttempt))
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		return pr.checkKept(ctx, deadline)
	}
	pr.peer = netip.AddrPort{}
	req := &http.Request{
		Method: http.MethodGet, URL: pr.url, Host: pr.url.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
	}
	req = req.WithContext(httptrace.WithClientTrace(ctx, pr.trace))
	// The transport itself: no redirects followed (2xx and 3xx pass), no
	// cookies, no client timeout (ctx bounds the attempt).
	resp, err := pr.tr.RoundTrip(req)
	reached := pr.peer
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) && uerr.Unwrap() != nil {
			// Drop a url.Error wrapper: the probe is named by the caller.
			return reached, uerr.Unwrap()
		}
		return reached, err
	}
	if pr.keep {
		// Read the rest of a short answer, so the connection is reused.
		io.CopyN(io.Discard, resp.Body, bodyKept)
	}
	resp.Body.Close()
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
