package mcp

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// The stop and start tools call the daemon's stop_service and
// start_service with the one service they name (issue 40 item 6).
func TestStopStartTools(t *testing.T) {
	got := map[string]api.ServicesArgs{}
	answer := func(op string) func(any, api.Handlers, any) error {
		return func(args any, _ api.Handlers, out any) error {
			got[op] = args.(api.ServicesArgs)
			return setResult(api.World{Project: "p", Worktree: "a"}, out)
		}
	}
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpStopService:  answer(api.OpStopService),
		api.OpStartService: answer(api.OpStartService),
	}}
	s := startSession(t, d)
	defer s.close()
	for tool, op := range map[string]string{ToolStop: api.OpStopService, ToolStart: api.OpStartService} {
		r, _ := s.call(tool, map[string]any{"worktree": "a", "service": "worker"}, nil)
		if r.IsError || !strings.Contains(r.Content[0].Text, `p/a: "worker"`) && !strings.Contains(r.Content[0].Text, "p/a: worker") {
			t.Errorf("%s: %+v", tool, r)
		}
		if a := got[op]; a.Name != "a" || len(a.Services) != 1 || a.Services[0] != "worker" {
			t.Errorf("%s sent %s %+v; want world a, service worker", tool, op, a)
		}
		if r, _ := s.call(tool, map[string]any{"worktree": "a"}, nil); !r.IsError {
			t.Errorf("%s with no service: %+v; want a tool error", tool, r)
		}
	}
}
