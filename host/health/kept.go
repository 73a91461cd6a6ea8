package health

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"time"
)

// A Prober of a plain http:// URL keeps its one connection itself rather
// than through an http.Transport: the request, rendered once, is written
// and the answer read (http.ReadResponse) in the probing goroutine, each
// attempt bounded by a deadline on the connection. A steady periodic
// probe is then two system calls and no goroutine hand-offs, no timer of
// its own and a few allocations (issue 44: an idle daemon's cost is its
// probes).

// keptTarget is what a kept-alive probe of u needs: the address to dial
// and the request to write; ok is false for a URL the Transport handles
// instead (https, credentials in the URL).
func keptTarget(u *url.URL) (dial string, request []byte, ok bool) {
	if u.Scheme != "http" || u.User != nil || u.Host == "" || u.Opaque != "" {
		return "", nil, false
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	dial = net.JoinHostPort(u.Hostname(), port)
	request = fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Go-http-client/1.1\r\n\r\n", u.RequestURI(), u.Host)
	return dial, request, true
}

// countingConn counts the bytes read from the connection in this attempt,
// to tell a kept connection that failed before answering (retried on a
// fresh one) from one that failed while answering (a failure).
type countingConn struct {
	net.Conn
	read *int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	*c.read += int64(n)
	return n, err
}

// checkKept is one attempt of a kept-alive plain http probe, pr.mu held.
func (pr *Prober) checkKept(ctx context.Context, deadline time.Time) (netip.AddrPort, error) {
	if pr.conn != nil {
		peer := remoteOf(pr.conn)
		err := pr.exchange(ctx, deadline)
		if err == nil || pr.read > 0 || isTimeout(err) || ctx.Err() != nil {
			return peer, err
		}
		// The kept connection failed before any answer (the process
		// died, or closed it while idle): once more on a fresh one, which
		// decides the attempt.
	}
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", pr.dial)
	if err != nil {
		if isTimeout(err) || ctx.Err() != nil {
			return netip.AddrPort{}, cause(ctx)
		}
		return netip.AddrPort{}, err
	}
	pr.conn = conn
	if pr.br == nil {
		pr.br = bufio.NewReaderSize(countingConn{conn, &pr.read}, 4096)
	} else {
		pr.br.Reset(countingConn{conn, &pr.read})
	}
	return remoteOf(conn), pr.exchange(ctx, deadline)
}

// cause is ctx's error, or context.DeadlineExceeded: what an attempt cut
// off by its deadline says (as the Transport's did).
func cause(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// exchange writes the request on pr.conn and reads the answer; the
// connection is kept only when the answer was whole and says it may be.
func (pr *Prober) exchange(ctx context.Context, deadline time.Time) error {
	conn := pr.conn
	pr.read = 0
	keep := false
	defer func() {
		if !keep {
			pr.dropConn()
		}
	}()
	conn.SetDeadline(deadline)
	if ctx.Done() != nil {
		// The caller gives up (the daemon stops): end the attempt now.
		stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if _, err := conn.Write(pr.request); err != nil {
		return pr.ioErr(ctx, err)
	}
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(pr.br, nil); err != nil {
			return pr.ioErr(ctx, err)
		}
		// 1xx (not 101) is informational: the answer follows.
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	n, err := io.CopyN(io.Discard, resp.Body, bodyKept)
	resp.Body.Close()
	whole := errors.Is(err, io.EOF) && n < bodyKept
	if err != nil && !whole {
		return pr.ioErr(ctx, err)
	}
	keep = whole && !resp.Close && (resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0) && pr.br.Buffered() == 0
	if resp.StatusCode < 200 || resp.StatusCode > 399 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// ioErr is what a failed read or write of an attempt says.
func (pr *Prober) ioErr(ctx context.Context, err error) error {
	if isTimeout(err) || ctx.Err() != nil {
		return cause(ctx)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the server closed the connection without answering")
	}
	return err
}

// dropConn closes the kept connection, pr.mu held.
func (pr *Prober) dropConn() {
	if pr.conn != nil {
		pr.conn.Close()
		pr.conn = nil
	}
}
