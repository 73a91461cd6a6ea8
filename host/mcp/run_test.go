package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// The run tool sends the command through OpRun, reports the queue as
// progress, and returns the exit code with a bounded output tail; a
// non-zero exit is a tool error.
func TestRunToolBoundsOutput(t *testing.T) {
	flood := strings.Repeat("ok line\n", 20000)
	var got api.RunArgs
	d := &fakeDaemon{ops: map[string]func(any, api.Handlers, any) error{
		api.OpRun: func(args any, h api.Handlers, out any) error {
			got = args.(api.RunArgs)
			h.Progress(api.Progress{Step: "queued", Message: "position 1: jobs 2 running (machine)"})
			for i := 0; i < len(flood); i += 4096 {
				h.Output(api.Output{Stream: "stdout", Data: flood[i:min(i+4096, len(flood))]})
			}
			h.Output(api.Output{Stream: "stderr", Data: "FAIL: TestThing\n"})
			return setResult(api.RunResult{Project: "p", Worktree: "a", ExitCode: 2, DurationMS: 1500, WaitedMS: 250}, out)
		},
	}}
	s := startSession(t, d)
	defer s.close()
	r, notes := s.call(ToolRun, map[string]any{"worktree": "a", "command": "go test ./..."}, "tok")
	if got.Command != "go test ./..." || got.Name != "a" || len(got.Argv) != 0 {
		t.Errorf("daemon got %+v", got)
	}
	if !r.IsError || !strings.Contains(r.Content[0].Text, "exited 2") {
		t.Errorf("result %+v; want a tool error naming exit 2", r)
	}
	var res RunResult
	if err := json.Unmarshal(r.Structured, &res); err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 2 || res.WaitedMS != 250 || !res.Truncated || len(res.OutputTail) > tailBytes || !strings.HasSuffix(res.OutputTail, "FAIL: TestThing\n") {
		t.Errorf("run result %+v", res)
	}
	queued := false
	for _, n := range notes {
		if strings.Contains(string(n.Params), "jobs 2 running (machine)") {
			queued = true
		}
	}
	if !queued {
		t.Errorf("no progress notification gave the place in the jobs queue")
	}
	r, _ = s.call(ToolRun, map[string]any{"worktree": "a"}, nil)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "needs the command") {
		t.Errorf("run without a command: %+v", r)
	}
}
