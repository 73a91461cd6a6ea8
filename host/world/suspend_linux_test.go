package world

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/host/supervisor"
)

// TestWakeSuspendResume: a down world is started from its recorded run
// specs through up's start loop, in depends_on order; suspend stops its
// processes and records it suspended; resume continues them and records it
// up. Each transition refuses a world in the wrong state, and suspend
// leaves a busy world alone.
func TestWakeSuspendResume(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	reg, err := registry.Open(ctx, filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	fd := &fakeDaemon{}
	e := New(Options{
		Home: home, HomeID: "h" + strconv.Itoa(os.Getpid()), Logger: hclog.NewNullLogger(), Redact: redact.New(), Registry: reg,
		Events: fd, Routes: fd,
	})
	dir := t.TempDir()
	cfg := parse(t, `
[project]
name = "acme"

[services.api]
cmd = "exec sleep 300"

[services.web]
cmd = "exec sleep 300"
depends_on = ["api"]
`)
	rec, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "wt", Path: dir, State: state.WorldDown})
	if err != nil {
		t.Fatal(err)
	}
	var keys []supervisor.Key
	for _, name := range []string{"api", "web"} {
		spec := supervisor.Spec{
			Key: e.SupKey("acme", "wt", name), Command: "exec sleep 300", Dir: dir,
			Env: []string{"PATH=" + os.Getenv("PATH")}, LogPath: filepath.Join(home, name+".log"),
		}
		keys = append(keys, spec.Key)
		raw, _ := json.Marshal(spec)
		if err := reg.UpsertService(ctx, &registry.Service{WorktreeID: rec.ID, Name: name, Kind: registry.KindCmd, State: state.ServiceStopped}); err != nil {
			t.Fatal(err)
		}
		if err := reg.SetServiceSpec(ctx, rec.ID, name, string(raw)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, k := range keys {
			e.sup.Resume(k)
			e.sup.Stop(ctx, k)
		}
		e.Shutdown()
		reg.Close()
	})

	worldIs := func(want state.World) {
		t.Helper()
		got, err := reg.Worktree(ctx, "acme", "wt")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != want {
			t.Fatalf("world is %s; want %s", got.State, want)
		}
	}
	stopped := func(key supervisor.Key, want bool) {
		t.Helper()
		st, ok := e.sup.State(key)
		if !ok || st.Pid == 0 {
			t.Fatalf("%s: no process", key.Service)
		}
		// SIGSTOP and SIGCONT land asynchronously: wait, bounded, for the
		// kernel to show the process stopped ('T') or not.
		deadline := time.Now().Add(10 * time.Second)
		for {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(st.Pid) + "/stat")
			if err != nil {
				t.Fatal(err)
			}
			fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
			if got := fields[0] == "T"; got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: process state %s; want stopped=%v", key.Service, fields[0], want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	lastEvent := func(want, detail string) {
		t.Helper()
		fd.mu.Lock()
		defer fd.mu.Unlock()
		evs := fd.events
		if len(evs) == 0 || evs[len(evs)-1].Event != want || evs[len(evs)-1].Detail != detail {
			t.Fatalf("events %+v; want the last %s (%q)", evs, want, detail)
		}
	}

	if err := e.WakeStart(ctx, cfg, rec); err != nil {
		t.Fatalf("wake-start a down world: %v", err)
	}
	worldIs(state.WorldUp)
	for _, name := range []string{"api", "web"} {
		if st, ok := e.ServiceState("acme", "wt", name); !ok || st != state.ServiceRunning {
			t.Fatalf("%s after wake-start: got %q (%v); want running", name, st, ok)
		}
	}
	if !e.Live("acme", "wt") || e.Live("acme", "other") {
		t.Fatalf("Live: got %v for wt, %v for other; want true, false", e.Live("acme", "wt"), e.Live("acme", "other"))
	}
	if err := e.WakeStart(ctx, cfg, rec); err != nil {
		t.Fatalf("wake-start an up world: got %v; want nil (left as it is)", err)
	}

	if err := e.Suspend(ctx, "acme", "wt", "idle"); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	worldIs(state.WorldSuspended)
	lastEvent(events.WorldSuspended, "idle")
	for _, k := range keys {
		stopped(k, true)
	}
	if err := e.WakeStart(ctx, cfg, rec); err == nil || !strings.Contains(err.Error(), "only a down world is started on request") {
		t.Fatalf("wake-start a suspended world: got %v; want refused", err)
	}
	if err := e.Suspend(ctx, "acme", "wt", "idle"); err == nil || !strings.Contains(err.Error(), "is suspended, not up") {
		t.Fatalf("suspend a suspended world: got %v; want refused", err)
	}

	if err := e.Resume(ctx, "acme", "wt"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	worldIs(state.WorldUp)
	lastEvent(events.WorldResumed, "")
	for _, k := range keys {
		stopped(k, false)
	}

	m := e.WorldLock("acme", "wt")
	if !m.TryLock("up", "wt") {
		t.Fatal("the world's lock is held after resume")
	}
	err = e.Suspend(ctx, "acme", "wt", "pressure")
	m.Unlock()
	if err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("suspend a busy world: got %v; want busy", err)
	}
	worldIs(state.WorldUp)
}
