package degraded

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/registry"
)

// TestModeLeavesOnceTheHomeTakesData: the message names the home and
// says until when; a failed write that is not about room is not
// tolerated; a mode degraded on a home that takes data again leaves at
// its next check, having the daemon finish its start, and then refuses
// nothing. (A home that stays full: host/daemon
// TestDaemonStartsDegradedOnFullDisk.)
func TestModeLeavesOnceTheHomeTakesData(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	reg, err := registry.Open(ctx, filepath.Join(home, registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	finished := 0
	m := New(home, reg, finisherFunc(func(context.Context) error { finished++; return nil }), hclog.NewNullLogger())

	full := &registry.UnwritableError{Dir: home, Kind: registry.DiskFull, Err: errors.New("no space left on device")}
	want := "binky's home " + home + " is on a full disk (no space left on device); the daemon supervises running worlds but refuses new work until space is freed"
	if got := m.Message(full); got != want {
		t.Errorf("Message(full disk) = %q; want %q", got, want)
	}
	ro := &registry.UnwritableError{Dir: home, Kind: registry.ReadOnlyFS, Err: errors.New("read-only file system")}
	if got := m.Message(ro); !strings.HasSuffix(got, "refuses new work until its file system is writable again") {
		t.Errorf("Message(read-only) = %q; want it to end in until its file system is writable again", got)
	}
	if m.Tolerate("open the event log", errors.New("permission denied")) {
		t.Errorf("Tolerate(permission denied) = true; want false: only a home without room is carried on")
	}

	m.degrade(full)
	if why, _ := m.Degraded(); why != full {
		t.Fatalf("Degraded() = %v; want the full disk", why)
	}
	if err := m.Refusal(ctx); err != nil {
		t.Errorf("Refusal on a home that takes data again = %v; want nil", err)
	}
	if why, _ := m.Degraded(); why != nil || finished != 1 {
		t.Errorf("after the check: degraded %v, the start finished %d times; want not degraded, finished once", why, finished)
	}
	if st := m.Status(ctx); st != nil {
		t.Errorf("Status() = %+v; want nil", st)
	}
}

type finisherFunc func(context.Context) error

func (f finisherFunc) FinishStart(ctx context.Context) error { return f(ctx) }
