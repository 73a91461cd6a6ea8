package registry

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/state"
)

func newWorktree(t *testing.T, r *Registry, name string) *Worktree {
	t.Helper()
	w, err := r.UpsertWorktree(context.Background(), &Worktree{Project: "shop", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestServiceRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	in := []*Service{
		{
			WorktreeID: w.ID, Name: "web", Kind: KindCmd, State: state.ServiceRunning,
			PID: 4242, PGID: 4242, StartTime: 1<<40 + 7,
			Ports: map[string]int{"http": 20000, "debug": 20001}, URL: "http://web.main.shop.localhost",
			Restarts: 2, LastExitCode: intp(-1), LastError: "killed by signal 9",
		},
		{
			WorktreeID: w.ID, Name: "db", Kind: KindAdapter, State: state.ServiceProvisioned,
			Address: "postgres://app:s3cret@127.0.0.1:5432/shop_main", Values: map[string]string{"schema": "public"},
			Ports: map[string]int{}, LastExitCode: nil,
		},
	}
	for _, s := range in {
		if err := r.UpsertService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Services(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "db" || got[1].Name != "web" {
		t.Fatalf("Services = %v; want db, web", names(got))
	}
	for i, want := range []*Service{in[1], in[0]} {
		g := *got[i]
		if g.UpdatedAt.IsZero() {
			t.Errorf("%s: UpdatedAt is zero", g.Name)
		}
		g.UpdatedAt = time.Time{}
		if want.Values == nil {
			want.Values = map[string]string{}
		}
		if !reflect.DeepEqual(&g, want) {
			t.Errorf("service %s = %+v; want %+v", g.Name, &g, want)
		}
	}
	one, err := r.Service(ctx, w.ID, "web")
	if err != nil || one.PID != 4242 {
		t.Errorf("Service(web) = %+v, %v; want pid 4242", one, err)
	}
	all, err := r.AllServices(ctx)
	if err != nil || len(all) != 2 {
		t.Errorf("AllServices = %d services, %v; want 2", len(all), err)
	}
}

func intp(v int) *int { return &v }

func exitText(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}

func names(ss []*Service) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// TestUpsertServiceKeepsProcess: re-recording a service's definition (a
// second `up`) must not forget the process the supervisor recorded.
func TestUpsertServiceKeepsProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd, Ports: map[string]int{"http": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetServiceProcess(ctx, w.ID, "web", 100, 100, 555, state.ServiceStarting); err != nil {
		t.Fatal(err)
	}
	if _, err := r.IncRestarts(ctx, w.ID, "web"); err != nil {
		t.Fatal(err)
	}
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd, Ports: map[string]int{"http": 2}, URL: "http://x"}); err != nil {
		t.Fatal(err)
	}
	s, err := r.Service(ctx, w.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != 100 || s.PGID != 100 || s.StartTime != 555 || s.State != state.ServiceStarting || s.Restarts != 1 {
		t.Errorf("after re-upsert: pid %d pgid %d start %d state %q restarts %d; want 100 100 555 starting 1", s.PID, s.PGID, s.StartTime, s.State, s.Restarts)
	}
	if s.Ports["http"] != 2 || s.URL != "http://x" {
		t.Errorf("after re-upsert: ports %v url %q; want http:2 and http://x", s.Ports, s.URL)
	}
}

func TestServiceStateTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		do      func() error
		pid     int
		state   state.Service
		exit    *int
		lastErr string
	}{
		{"spawned", func() error { return r.SetServiceProcess(ctx, w.ID, "web", 77, 77, 9000, state.ServiceStarting) }, 77, state.ServiceStarting, nil, ""},
		{"probe passed", func() error { return r.SetServiceState(ctx, w.ID, "web", state.ServiceRunning, nil, "") }, 77, state.ServiceRunning, nil, ""},
		{"exited", func() error {
			return r.SetServiceState(ctx, w.ID, "web", state.ServiceExited, intp(3), "exit status 3")
		}, 0, state.ServiceExited, intp(3), "exit status 3"},
		{"restarted", func() error { return r.SetServiceProcess(ctx, w.ID, "web", 78, 78, 9100, state.ServiceStarting) }, 78, state.ServiceStarting, intp(3), "exit status 3"},
		{"running keeps last exit", func() error { return r.SetServiceState(ctx, w.ID, "web", state.ServiceRunning, nil, "") }, 78, state.ServiceRunning, intp(3), "exit status 3"},
		{"lost", func() error {
			return r.SetServiceState(ctx, w.ID, "web", state.ServiceLost, nil, "pid 78 now belongs to another process")
		}, 0, state.ServiceLost, intp(3), "pid 78 now belongs to another process"},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		s, err := r.Service(ctx, w.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		gotExit, wantExit := exitText(s.LastExitCode), exitText(st.exit)
		if s.PID != st.pid || s.State != st.state || gotExit != wantExit || s.LastError != st.lastErr {
			t.Errorf("%s: pid %d state %q exit %s error %q; want pid %d state %q exit %s error %q",
				st.name, s.PID, s.State, gotExit, s.LastError, st.pid, st.state, wantExit, st.lastErr)
		}
		if st.pid == 0 && (s.PGID != 0 || s.StartTime != 0) {
			t.Errorf("%s: pgid %d start %d; want both cleared with the pid", st.name, s.PGID, s.StartTime)
		}
	}
}

func TestRestartsAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "web", Kind: KindCmd}); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		n, err := r.IncRestarts(ctx, w.ID, "web")
		if err != nil || n != want {
			t.Errorf("IncRestarts = %d, %v; want %d", n, err, want)
		}
	}
	if err := r.ResetRestarts(ctx, w.ID, "web"); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Service(ctx, w.ID, "web"); s.Restarts != 0 {
		t.Errorf("restarts after reset = %d; want 0", s.Restarts)
	}
	if err := r.DeleteService(ctx, w.ID, "web"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Service(ctx, w.ID, "web"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted service: err = %v; want ErrNotFound", err)
	}
}

func TestServiceErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	tests := []struct {
		name     string
		err      error
		notFound bool
	}{
		{"bad kind", r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "x", Kind: "daemon"}), false},
		{"no name", r.UpsertService(ctx, &Service{WorktreeID: w.ID, Kind: KindCmd}), false},
		{"unknown worktree", r.UpsertService(ctx, &Service{WorktreeID: 999, Name: "x", Kind: KindCmd}), false},
		{"process of unknown service", r.SetServiceProcess(ctx, w.ID, "nope", 1, 1, 1, state.ServiceRunning), true},
		{"state of unknown service", r.SetServiceState(ctx, w.ID, "nope", state.ServiceFailed, nil, ""), true},
		{"restart of unknown service", func() error { _, err := r.IncRestarts(ctx, w.ID, "nope"); return err }(), true},
	}
	for _, tc := range tests {
		if tc.err == nil {
			t.Errorf("%s: got nil error; want one", tc.name)
			continue
		}
		if got := errors.Is(tc.err, ErrNotFound); got != tc.notFound {
			t.Errorf("%s: errors.Is(%v, ErrNotFound) = %v; want %v", tc.name, tc.err, got, tc.notFound)
		}
	}
}

func TestVerifyRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if _, err := r.LastVerifyRun(ctx, w.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("LastVerifyRun with none: err = %v; want ErrNotFound", err)
	}
	start := time.Date(2025, 5, 6, 7, 8, 9, 123456789, time.UTC)
	in := &VerifyRun{
		WorktreeID: w.ID, StartedAt: start, Duration: 2345 * time.Millisecond,
		Commit: "0123abcd", Dirty: true, Passed: false,
		Checks: []Check{
			{Cmd: "go vet ./...", ExitCode: 0, Duration: 1200 * time.Millisecond, Passed: true},
			{Cmd: "go test ./...", ExitCode: 1, Duration: 1145 * time.Millisecond, Passed: false},
		},
	}
	if err := r.AddVerifyRun(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.ID == 0 {
		t.Errorf("AddVerifyRun did not set the ID")
	}
	got, err := r.LastVerifyRun(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.StartedAt.Equal(start) {
		t.Errorf("StartedAt = %v; want %v", got.StartedAt, start)
	}
	got.StartedAt = start
	if !reflect.DeepEqual(got, in) {
		t.Errorf("LastVerifyRun = %+v; want %+v", got, in)
	}
	for i := range keepVerifyRuns + 5 {
		if err := r.AddVerifyRun(ctx, &VerifyRun{WorktreeID: w.ID, Passed: true, Commit: string(rune('a' + i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := r.VerifyRuns(ctx, w.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != keepVerifyRuns {
		t.Errorf("kept %d verify runs; want %d", len(all), keepVerifyRuns)
	}
	if len(all) > 1 && all[0].ID < all[1].ID {
		t.Errorf("VerifyRuns not newest first: ids %d, %d", all[0].ID, all[1].ID)
	}
}

// TestSetServiceInputs: an empty key or sum keeps the recorded one.
func TestSetServiceInputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	w := newWorktree(t, r, "main")
	if err := r.UpsertService(ctx, &Service{WorktreeID: w.ID, Name: "db", Kind: KindAdapter}); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][2]string{{"key1", "sum1"}, {"", "sum2"}} {
		if err := r.SetServiceInputs(ctx, w.ID, "db", in[0], in[1]); err != nil {
			t.Fatal(err)
		}
	}
	db, err := r.Service(ctx, w.ID, "db")
	if err != nil {
		t.Fatal(err)
	}
	if db.GoldenKey != "key1" || db.MigrateSum != "sum2" {
		t.Errorf("golden key %q, migrate sum %q; want key1 (kept) and sum2", db.GoldenKey, db.MigrateSum)
	}
	if err := r.SetServiceInputs(ctx, w.ID, "nope", "k", "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetServiceInputs of a service not recorded: %v; want ErrNotFound", err)
	}
}
