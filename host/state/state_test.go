package state

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// declared parses state.go for the constants of type typ, with their doc
// comments, in source order.
func declared(t *testing.T, typ string) (names []string, docs map[string]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "state.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs = map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for _, n := range vs.Names {
				names = append(names, n.Name)
				docs[n.Name] = vs.Doc.Text()
			}
		}
	}
	return names, docs
}

// TestVocabularyIsWhole: every World and Service constant declared is in
// Worlds or Services (so Valid and the registry accept it), in the same
// order, documented, and its string is the one on the wire and in the
// registry; a value added, renamed or dropped fails here until the lists
// and this table say so.
func TestVocabularyIsWhole(t *testing.T) {
	t.Parallel()
	wire := map[string]string{
		"WorldDown": "down", "WorldStarting": "starting", "WorldUp": "up", "WorldStopping": "stopping",
		"WorldFailed": "failed", "WorldRemoving": "removing", "WorldDegraded": "degraded",
		"WorldSuspended": "suspended", "WorldQueued": "queued", "WorldAbsent": "absent",
		"ServiceStarting": "starting", "ServiceRunning": "running", "ServiceUnhealthy": "unhealthy",
		"ServiceBackoff": "backoff", "ServiceStopping": "stopping", "ServiceStopped": "stopped",
		"ServiceExited": "exited", "ServiceFailed": "failed", "ServiceLost": "lost",
		"ServiceProvisioning": "provisioning", "ServiceProvisioned": "provisioned",
	}
	var worlds, services []string
	for _, w := range Worlds() {
		worlds = append(worlds, string(w))
		if !w.Valid() {
			t.Errorf("World(%q).Valid() = false; want true", w)
		}
	}
	for _, s := range Services() {
		services = append(services, string(s))
		if !s.Valid() {
			t.Errorf("Service(%q).Valid() = false; want true", s)
		}
	}
	for _, c := range []struct {
		typ    string
		listed []string
	}{{"World", worlds}, {"Service", services}} {
		names, docs := declared(t, c.typ)
		var strs []string
		for _, n := range names {
			s, ok := wire[n]
			if !ok {
				t.Errorf("%s is not in this test's wire table: add its string", n)
			}
			strs = append(strs, s)
			if docs[n] == "" {
				t.Errorf("%s has no doc comment: say who writes it and what it means", n)
			}
		}
		if !slices.Equal(strs, c.listed) {
			t.Errorf("%s constants declared %v; %ss() lists %v", c.typ, strs, c.typ, c.listed)
		}
		seen := map[string]bool{}
		for _, s := range c.listed {
			if seen[s] {
				t.Errorf("%s state %q is listed twice", c.typ, s)
			}
			seen[s] = true
		}
	}
	for _, s := range []string{"", "healthy", "restarting", "running"} {
		if World(s).Valid() {
			t.Errorf("World(%q).Valid() = true; want false", s)
		}
	}
	for _, s := range []string{"", "healthy", "restarting", "up", "degraded"} {
		if Service(s).Valid() {
			t.Errorf("Service(%q).Valid() = true; want false", s)
		}
	}
}

// check runs method over every state of all against want (the ones it is
// true for), and over a string outside the vocabulary.
func check[S ~string](t *testing.T, name string, all []S, method func(S) bool, want ...S) {
	t.Helper()
	for _, st := range all {
		if got := method(st); got != slices.Contains(want, st) {
			t.Errorf("%T(%q).%s() = %v; want %v", st, st, name, got, !got)
		}
	}
	if method("bogus") {
		t.Errorf("%T(%q).%s() = true; want false", S("bogus"), "bogus", name)
	}
}

// TestWorldRecorded: the registry stores every world state but the ones
// only status (queued) or a dry run (absent) reports.
func TestWorldRecorded(t *testing.T) {
	t.Parallel()
	check(t, "Recorded", Worlds(), World.Recorded,
		WorldDown, WorldStarting, WorldUp, WorldStopping, WorldFailed, WorldRemoving, WorldDegraded, WorldSuspended)
}

// TestWorldServing: up and degraded are the worlds meant to run (adoption
// restarts their dead services, status checks them, env does not warn).
func TestWorldServing(t *testing.T) {
	t.Parallel()
	check(t, "Serving", Worlds(), World.Serving, WorldUp, WorldDegraded)
}

// TestServiceLive: the states in which the supervisor keeps a process
// going (up's plan counts them as running, a reset stops them).
func TestServiceLive(t *testing.T) {
	t.Parallel()
	check(t, "Live", Services(), Service.Live, ServiceStarting, ServiceRunning, ServiceUnhealthy, ServiceBackoff)
}

// TestServiceEnded: the states without a process and none coming (the
// registry clears the pid, status counts them as given up).
func TestServiceEnded(t *testing.T) {
	t.Parallel()
	check(t, "Ended", Services(), Service.Ended, ServiceStopped, ServiceExited, ServiceFailed, ServiceLost)
}

// TestServiceRunning: the states of a process that runs with nothing
// said against it (status drops an old error, up leaves it alone).
func TestServiceRunning(t *testing.T) {
	t.Parallel()
	check(t, "Running", Services(), Service.Running, ServiceStarting, ServiceRunning)
}
