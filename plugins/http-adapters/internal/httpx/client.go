package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxBody bounds how much of a reply is read.
const maxBody = 8 << 20

// Client sends requests to one kind of HTTP API. The zero value is not
// usable; use New.
type Client struct {
	http *http.Client
}

// New returns a client with bounded dial and header timeouts; each call's
// context bounds the whole request.
func New() *Client {
	tr := &http.Transport{
		Proxy:                 nil, // admin URLs are reached directly, never through HTTP_PROXY
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &Client{http: &http.Client{Transport: tr}}
}

// Request is one call.
type Request struct {
	Method string
	URL    string // from Endpoint.URL
	// JSON, when not nil, is marshalled as the body with Content-Type
	// application/json; Body, when set instead, is sent as is with
	// ContentType.
	JSON        any
	Body        []byte
	ContentType string
}

// Response is a reply of any status.
type Response struct {
	Status int
	Body   []byte
}

// Do sends req with the endpoint's basic auth and returns the reply,
// whatever its status. Its error is a transport failure (classified
// unreachable by Classify), or a body that would not marshal.
func (c *Client) Do(ctx context.Context, ep *Endpoint, req Request) (*Response, error) {
	body := req.Body
	ctype := req.ContentType
	if req.JSON != nil {
		b, err := json.Marshal(req.JSON)
		if err != nil {
			return nil, fmt.Errorf("encode the request body: %w", err)
		}
		body, ctype = b, "application/json"
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, rd)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	hr.Header.Set("Accept", "application/json")
	switch {
	case ep.KeyHeader != "":
		if ep.Password != "" {
			hr.Header.Set(ep.KeyHeader, ep.Password)
		}
	case ep.HasAuth:
		hr.SetBasicAuth(ep.User, ep.Password)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, &TransportError{Method: req.Method, URL: req.URL, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, &TransportError{Method: req.Method, URL: req.URL, Err: err}
	}
	return &Response{Status: resp.StatusCode, Body: b}, nil
}

// Call is Do that wants a 2xx reply, or one of the statuses in ok, and
// decodes a JSON reply into out when out is not nil. Any other status is
// a *StatusError.
func (c *Client) Call(ctx context.Context, ep *Endpoint, req Request, out any, ok ...int) (*Response, error) {
	resp, err := c.Do(ctx, ep, req)
	if err != nil {
		return nil, err
	}
	good := resp.Status >= 200 && resp.Status < 300
	for _, s := range ok {
		good = good || resp.Status == s
	}
	if !good {
		return resp, &StatusError{Method: req.Method, Path: pathOf(req.URL), Status: resp.Status, Body: OneLine(resp.Body), Raw: resp.Body}
	}
	if out != nil && resp.Status >= 200 && resp.Status < 300 {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return resp, fmt.Errorf("%s %s: the reply is not the JSON expected: %v (reply %q)", req.Method, pathOf(req.URL), err, OneLine(resp.Body))
		}
	}
	return resp, nil
}

// TransportError is a request that got no reply.
type TransportError struct {
	Method, URL string
	Err         error
}

func (e *TransportError) Error() string {
	// net/http's *url.Error quotes the URL (`Put "http://h/api/x": dial
	// tcp …`); the operation already says what was done, so keep the cause.
	cause := e.Err
	var ue *url.Error
	if errors.As(cause, &ue) {
		cause = ue.Err
	}
	msg := cause.Error()
	return fmt.Sprintf("%s %s: %s", e.Method, pathOf(e.URL), msg)
}

func (e *TransportError) Unwrap() error { return e.Err }

// StatusError is a reply with an unwanted status.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string // OneLine of the reply
	Raw          []byte // the reply as sent
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	}
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// pathOf is the path of a URL without scheme, host and credentials.
func pathOf(raw string) string {
	s := raw
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
		if j := strings.IndexByte(s, '/'); j >= 0 {
			s = s[j:]
		} else {
			s = "/"
		}
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i]
	}
	return s
}

// OneLine is a reply body for an error message: whitespace runs folded to
// one space, cut to 300 bytes.
func OneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
