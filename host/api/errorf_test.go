package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// TestErrorKeepsItsCause: an error built with %w, or wrapped, reads as
// with %v and lets errors.Is and errors.As see its cause; one built
// without %w has none.
func TestErrorKeepsItsCause(t *testing.T) {
	pathErr := &fs.PathError{Op: "open", Path: "/x/binky.toml", Err: fs.ErrNotExist}
	other := errors.New("second cause")
	tests := []struct {
		name    string
		err     *Error
		message string
		is      []error
	}{
		{"%w", Errorf(CodeInvalid, "service %s: %w", "web", pathErr), "service web: open /x/binky.toml: file does not exist", []error{pathErr, fs.ErrNotExist}},
		{"two %w", Errorf(CodeFailed, "%w, then %w", pathErr, other), "open /x/binky.toml: file does not exist, then second cause", []error{fs.ErrNotExist, other}},
		{"Wrap", Wrap(CodeFailed, fmt.Errorf("start web: %w", pathErr)), "start web: open /x/binky.toml: file does not exist", []error{fs.ErrNotExist}},
		{"%v", Errorf(CodeFailed, "start %s: %v", "web", pathErr), "start web: open /x/binky.toml: file does not exist", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Message != tt.message || tt.err.Error() != tt.message {
				t.Errorf("message %q; want %q", tt.err.Message, tt.message)
			}
			for _, target := range tt.is {
				if !errors.Is(tt.err, target) {
					t.Errorf("errors.Is(%v, %v) = false; want true", tt.err, target)
				}
			}
			var pe *fs.PathError
			if got, want := errors.As(tt.err, &pe), len(tt.is) > 0; got != want {
				t.Errorf("errors.As(*fs.PathError) = %v; want %v", got, want)
			}
			if len(tt.is) == 0 && tt.err.Unwrap() != nil {
				t.Errorf("Unwrap() = %v; want nil without %%w", tt.err.Unwrap())
			}
			// Wrapped in turn, the api error is still found, code and all.
			var ae *Error
			if !errors.As(fmt.Errorf("op: %w", tt.err), &ae) || ae.Code != tt.err.Code {
				t.Errorf("errors.As(*Error) through a wrap = %v; want code %s", ae, tt.err.Code)
			}
		})
	}
}

// TestErrorWireHasNoCause: the wire carries an error's code and message
// only; its cause stays in the daemon's process, and an error read back
// from the wire has none.
func TestErrorWireHasNoCause(t *testing.T) {
	err := Errorf(CodeFailed, "start web: %w", &os.PathError{Op: "exec", Path: "/secret/path/run.sh", Err: os.ErrPermission})
	b, jerr := json.Marshal(Frame{Error: err})
	if jerr != nil {
		t.Fatal(jerr)
	}
	want := `{"error":{"code":"failed","message":"start web: exec /secret/path/run.sh: permission denied"}}`
	if string(b) != want {
		t.Errorf("encoded %s; want %s", b, want)
	}
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Error == nil || f.Error.Unwrap() != nil || errors.Is(f.Error, os.ErrPermission) {
		t.Errorf("decoded %+v with cause %v; want the message and no cause", f.Error, f.Error.Unwrap())
	}
}
