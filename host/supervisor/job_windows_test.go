//go:build windows

package supervisor

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/binkyhq/binky/host/state"
	"github.com/binkyhq/binky/internal/wine"
)

// TestHelperService is a service process of this file's tests, run through
// cmd.exe. It writes its pid to $SUP_HELPER.pid (with a newline) in its
// directory and waits: "parent" first starts a "child" of its own (a
// grandchild of cmd.exe); "break" writes broke on CTRL_BREAK_EVENT and
// exits 0.
func TestHelperService(t *testing.T) {
	role := os.Getenv("SUP_HELPER")
	if role == "" {
		t.Skip("runs only as a service of this package's Windows tests")
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, os.Interrupt)
	if role == "parent" {
		c := exec.Command(os.Args[0], "-test.run=^TestHelperService$")
		c.Env = append(os.Environ(), "SUP_HELPER=child")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(role+".pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	<-ints
	if role == "break" {
		os.WriteFile("broke", []byte("yes"), 0o600)
	}
	os.Exit(0)
}

// helperSpec is a service running this test binary's helper as role.
func helperSpec(w world, name, role string) Spec {
	spec := w.spec(name, `"`+os.Args[0]+`" -test.run=TestHelperService`)
	spec.Env = append(os.Environ(), "SUP_HELPER="+role)
	return spec
}

// procHandle opens pid for the test to see its exit (and kill it at the
// end).
func procHandle(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("open pid %d: %v", pid, err)
	}
	t.Cleanup(func() {
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	})
	return h
}

func gone(h windows.Handle, d time.Duration) bool {
	ev, _ := windows.WaitForSingleObject(h, uint32(d.Milliseconds()))
	return ev == windows.WAIT_OBJECT_0
}

// TestStopEndsJobWindows: a service's processes are in its named job, and
// Stop ends them all, the grandchild too.
func TestStopEndsJobWindows(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	spec := helperSpec(w, "api", "parent")
	spec.StopTimeout = 2 * time.Second
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	child := procHandle(t, w.readPid(t, "child.pid"))
	parent := w.readPid(t, "parent.pid")
	st, _ := s.State(spec.Key)
	members := markedProcesses(spec.Key.Marker())
	for _, p := range []int{st.Pid, parent} {
		if !slices.Contains(members, p) {
			t.Errorf("pid %d is not in the service's job %v", p, members)
		}
	}
	if m := markedPrefix(WorldMarker("", w.project, "wt")); len(m) != len(members) {
		t.Errorf("markedPrefix(world) = %v; want the job's %v", m, members)
	}
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if !gone(child, hang) {
		t.Fatal("the grandchild outlived Stop")
	}
	if left := markedProcesses(spec.Key.Marker()); len(left) > 0 {
		t.Errorf("the job still holds %v after Stop", left)
	}
}

// adoptable starts spec under a first supervisor and shuts it down as a
// daemon exits, leaving the processes running; it returns the record.
func adoptable(t *testing.T, spec Spec) Record {
	t.Helper()
	rec := newRecorder()
	a := newSup(t, rec, Options{})
	if err := a.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.waitEvent(t, EventStarted, spec.Key, 1)
	rec.mu.Lock()
	record := rec.started[0]
	rec.mu.Unlock()
	a.Shutdown()
	if record.StartTime == 0 || record.Pgid != record.Pid {
		t.Fatalf("record %+v; want a start time and pgid == pid", record)
	}
	return record
}

// TestAdoptWindows: a second supervisor adopts the first one's service by
// its record, sees the leader's death through its handle, ends what the
// leader left in the job, and restarts it.
func TestAdoptWindows(t *testing.T) {
	w := newWorld(t)
	spec := helperSpec(w, "api", "parent")
	record := adoptable(t, spec)
	child := procHandle(t, w.readPid(t, "child.pid"))
	leader := procHandle(t, record.Pid)
	os.Remove(w.path("child.pid"))

	rec := newRecorder()
	b := newSup(t, rec, Options{Policy: fastPolicy})
	if res := b.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptAdopted || res[0].Err != nil {
		t.Fatalf("Adopt = %+v; want adopted", res)
	}
	if st, _ := b.State(spec.Key); st.State != state.ServiceRunning || st.Pid != record.Pid {
		t.Errorf("status %+v; want running pid %d", st, record.Pid)
	}
	if res := b.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptSkipped {
		t.Errorf("second Adopt = %+v; want skipped", res)
	}
	windows.TerminateProcess(leader, 1)
	rec.waitEvent(t, EventStarted, spec.Key, 1) // on-failure: restarted
	if !gone(child, hang) {
		t.Error("the dead leader's child outlived the adopting supervisor's clean-up")
	}
	w.readPid(t, "child.pid") // the restarted service runs
}

// TestAdoptedStopWindows: stopping an adopted service terminates its job,
// reopened by name.
func TestAdoptedStopWindows(t *testing.T) {
	w := newWorld(t)
	spec := helperSpec(w, "api", "parent")
	spec.StopSignal = "SIGKILL"
	record := adoptable(t, spec)
	child := procHandle(t, w.readPid(t, "child.pid"))
	b := newSup(t, newRecorder(), Options{})
	if res := b.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptAdopted {
		t.Fatalf("Adopt = %+v; want adopted", res)
	}
	if err := b.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if !gone(child, hang) {
		t.Fatal("the adopted service's grandchild outlived Stop")
	}
}

// TestAdoptPidReusedWindows: a record whose pid now names a process created
// at another time is lost, and that process is left alone.
func TestAdoptPidReusedWindows(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperService$")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "SUP_HELPER=stranger")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	st, err := procStartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	spec := helperSpec(w, "api", "parent")
	rec := newRecorder()
	s := newSup(t, rec, Options{})
	record := Record{Key: spec.Key, Spec: spec, Pid: cmd.Process.Pid, Pgid: cmd.Process.Pid, StartTime: st - 1}
	if res := s.Adopt(context.Background(), []Record{record}); res[0].Outcome != AdoptLost {
		t.Fatalf("Adopt = %+v; want lost", res)
	}
	time.Sleep(100 * time.Millisecond)
	if !alive(uint32(cmd.Process.Pid)) {
		t.Error("the process that reused the pid was signalled")
	}
}

// TestGracefulStopWindows: Stop sends CTRL_BREAK_EVENT first, and a
// service that handles it ends cleanly before stop_timeout.
func TestGracefulStopWindows(t *testing.T) {
	wine.Skip(t, "GenerateConsoleCtrlEvent fails with \"Invalid handle\" on a console joined with AttachConsole")
	w := newWorld(t)
	s := newSup(t, newRecorder(), Options{})
	spec := helperSpec(w, "api", "break")
	spec.StopTimeout = hang
	if err := s.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	w.readPid(t, "break.pid")
	start := time.Now()
	if err := s.Stop(context.Background(), spec.Key); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(w.path("broke")); string(b) != "yes" {
		t.Errorf("broke = %q after Stop (%s); want yes: the service did not see CTRL_BREAK_EVENT", b, time.Since(start))
	}
}
