package world

import (
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
)

// TestWorldState: an up world whose command gave up is degraded while
// another runs and failed when none does; a recorded degraded world stays
// degraded; a world not meant to run reports what was recorded.
func TestWorldState(t *testing.T) {
	cmd := func(name string, s state.Service) api.Service {
		return api.Service{Name: name, Kind: registry.KindCmd, State: s}
	}
	for _, tc := range []struct {
		name       string
		w          api.World
		want       state.World
		wantReason string
	}{
		{"all run", api.World{State: state.WorldUp, Services: []api.Service{cmd("a", state.ServiceRunning)}}, state.WorldUp, ""},
		{"one failed", api.World{State: state.WorldUp, Services: []api.Service{cmd("a", state.ServiceRunning), cmd("b", state.ServiceFailed)}}, state.WorldDegraded, "b failed"},
		{"none runs", api.World{State: state.WorldUp, Services: []api.Service{cmd("a", state.ServiceExited)}}, state.WorldFailed, "a exited"},
		{"unhealthy", api.World{State: state.WorldUp, Services: []api.Service{cmd("a", state.ServiceUnhealthy)}}, state.WorldDegraded, "a unhealthy"},
		{"recorded degraded", api.World{State: state.WorldDegraded, Reason: "slice db half made", Services: []api.Service{cmd("a", state.ServiceRunning)}}, state.WorldDegraded, "slice db half made"},
		{"down", api.World{State: state.WorldDown, Reason: "r", Services: []api.Service{cmd("a", state.ServiceFailed)}}, state.WorldDown, "r"},
		{"adapter ignored", api.World{State: state.WorldUp, Services: []api.Service{{Name: "db", Kind: registry.KindAdapter, State: state.ServiceFailed}}}, state.WorldUp, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := worldState(&tc.w)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("got %s (%q); want %s (%q)", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestServiceReason: status says why a service is not as it should be,
// without repeating a state its error already names.
func TestServiceReason(t *testing.T) {
	for _, tc := range []struct {
		sv   api.Service
		sup  string
		want string
	}{
		{api.Service{State: state.ServiceRunning}, "", ""},
		{api.Service{State: state.ServiceUnhealthy}, "probe http failed for 30s", "probe http failed for 30s"},
		{api.Service{State: state.ServiceUnhealthy}, "", "unhealthy: its health check fails"},
		{api.Service{State: state.ServiceFailed}, "", "failed"},
		{api.Service{State: state.ServiceExited, Error: "exit status 2"}, "", "exited: exit status 2"},
		{api.Service{State: state.ServiceFailed, Error: "failed: gave up"}, "", "failed: gave up"},
		{api.Service{State: state.ServiceFailed, Error: "provisioning failed: no server"}, "", "provisioning failed: no server"},
	} {
		if got := serviceReason(tc.sv, tc.sup); got != tc.want {
			t.Errorf("serviceReason(%s, %q, %q): got %q; want %q", tc.sv.State, tc.sv.Error, tc.sup, got, tc.want)
		}
	}
}
