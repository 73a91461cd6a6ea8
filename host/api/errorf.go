package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errorf builds an api error with a code. As with fmt.Errorf, an operand
// of a %w verb is kept as the error's cause, which errors.Is and
// errors.As see through Unwrap; the message reads as with %v. The cause
// stays in the process: the wire carries the code and the message only.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error()}
	switch w := err.(type) {
	case interface{ Unwrap() error }:
		e.cause = w.Unwrap()
	case interface{ Unwrap() []error }:
		e.cause = errors.Join(w.Unwrap()...)
	}
	return e
}

// Wrap is err with a code: its message, and err as its cause. err must
// not be nil.
func Wrap(code string, err error) *Error {
	return &Error{Code: code, Message: err.Error(), cause: err}
}

// Decode reads args into v, as an invalid-request error on failure; empty
// args leave v as it is.
func Decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return Errorf(CodeInvalid, "bad arguments: %w", err)
	}
	return nil
}
