package httpx

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Classify picks the reply code of a failed request: no reply is
// unreachable; 401 and 403 are auth; 400, 404, 405, 413 and 422 are
// invalid; 409 is conflict; 5xx from a proxy that could not reach the
// server (502, 503, 504) is unreachable; anything else internal. An
// *sdk.Error keeps its code.
func Classify(err error) sdk.Code {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return se.Code
	}
	var st *StatusError
	if errors.As(err, &st) {
		switch st.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return sdk.CodeAuth
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return sdk.CodeInvalid
		case http.StatusConflict:
			return sdk.CodeConflict
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return sdk.CodeUnreachable
		}
		return sdk.CodeInternal
	}
	var te *TransportError
	if errors.As(err, &te) {
		if errors.Is(err, context.Canceled) {
			return sdk.CodeInternal
		}
		return sdk.CodeUnreachable
	}
	if sdk.IsNetworkError(err) {
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

// Hints are the next steps Fail appends per code.
type Hints map[sdk.Code]string

// Fail turns err into the reply's *sdk.Error: "<op>: <cause>[ (<hint>)]",
// one line, with the code Classify gives (or code, when it is not empty),
// and every password of the admin URL raw and every extra secret scrubbed
// out.
func Fail(op, raw string, err error, hints Hints, secrets ...string) error {
	code := Classify(err)
	msg := err.Error()
	se, direct := err.(*sdk.Error)
	if direct {
		msg = se.Message // a request the adapter refused itself: no hint
	}
	msg = op + ": " + msg
	if h := hints[code]; h != "" && !direct {
		msg += " (" + h + ")"
	}
	msg = strings.Join(strings.Fields(msg), " ")
	return &sdk.Error{Code: code, Message: Scrub(msg, raw, secrets...)}
}

// WithCode gives err the reply code code; its message stays err's. Use it
// for a server's error that is wrapped with more context on the way up
// (an *sdk.Error would print its code in the middle of the message).
func WithCode(code sdk.Code, err error) error { return &codedError{code: code, err: err} }

type codedError struct {
	code sdk.Code
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
