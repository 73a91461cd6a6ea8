package api

import (
	"encoding/json"
	"fmt"
)

// Errorf builds an api error with a code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Decode reads args into v, as an invalid-request error on failure; empty
// args leave v as it is.
func Decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return Errorf(CodeInvalid, "bad arguments: %v", err)
	}
	return nil
}
