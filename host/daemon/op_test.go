package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/world"
)

// TestOpDecodesAndCalls: the daemon's one generic op decodes a call's
// arguments into the engine method's type and calls it with the call's
// stream; arguments that do not decode are refused as invalid and the
// method is not called; a method's error comes back without a result, its
// result without an error.
func TestOpDecodesAndCalls(t *testing.T) {
	d := &Daemon{}
	s := world.NewStream(io.Discard, nil)
	failed := errors.New("the world would not come up")
	var calls []api.DownArgs
	h := op(d, func(_ *world.Engine, _ context.Context, a api.DownArgs, p world.Progress) (*api.World, error) {
		if p != world.Progress(s) {
			t.Errorf("method called with progress %v; want the call's stream", p)
		}
		calls = append(calls, a)
		if a.Name == "bad" {
			return nil, failed
		}
		return &api.World{Worktree: a.Name}, nil
	})
	tests := []struct {
		name   string
		args   string
		calls  int    // the method's calls so far
		result string // the world's name in the result
		code   string // else the error's code ("-": failed itself)
	}{
		{name: "decoded", args: `{"name":"feat-a","project":"acme"}`, calls: 1, result: "feat-a"},
		{name: "no arguments", args: ``, calls: 2, result: ""},
		{name: "not the args' shape", args: `{"name":7}`, calls: 2, code: api.CodeInvalid},
		{name: "method fails", args: `{"name":"bad"}`, calls: 3, code: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h(t.Context(), json.RawMessage(tt.args), s)
			if len(calls) != tt.calls {
				t.Fatalf("method called %d times; want %d", len(calls), tt.calls)
			}
			switch tt.code {
			case "":
				w, ok := res.(*api.World)
				if err != nil || !ok || w.Worktree != tt.result {
					t.Fatalf("got %#v, %v; want world %q", res, err, tt.result)
				}
			case "-":
				if !errors.Is(err, failed) || res != nil {
					t.Fatalf("got %#v, %v; want no result and the method's error", res, err)
				}
			default:
				var ae *api.Error
				if !errors.As(err, &ae) || ae.Code != tt.code || !strings.Contains(ae.Message, "bad arguments") || res != nil {
					t.Fatalf("got %#v, %v; want no result and %s bad arguments", res, err, tt.code)
				}
			}
		})
	}
	if calls[0].Project != "acme" {
		t.Errorf("method got project %q; want acme", calls[0].Project)
	}
}
