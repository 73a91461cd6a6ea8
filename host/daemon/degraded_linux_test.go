package daemon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
)

// fullHome mounts a 4 MiB tmpfs as a home, lets made put what it wants in
// it, then fills it; free gives the space back. It needs root: without it
// the test skips saying why, except under CI=true, where it fails.
func fullHome(t *testing.T, made func(home string)) (home string, free func()) {
	t.Helper()
	need := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs a tmpfs home it can fill: %s", why)
		}
		t.Skipf("skipped: this test needs a tmpfs home it can fill: %s", why)
	}
	if os.Geteuid() != 0 {
		need("mounting one takes root")
	}
	home = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", home).CombinedOutput(); err != nil {
		need("mount: " + err.Error() + ": " + string(bytes.TrimSpace(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", home).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", home, err, out)
		}
	})
	made(home)
	filler := filepath.Join(home, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	if registry.Unwritable(home) == nil {
		t.Fatalf("%s still takes writes after filling it", home)
	}
	return home, func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDaemonStartsDegradedOnFullDisk: a daemon whose home is on a full
// disk (its registry made beforehand) starts, says in status that it is
// degraded and why, refuses a verb that writes with that reason, serves
// one that only reads, and — once space is freed, without a restart —
// leaves degraded mode and serves the verb that writes.
func TestDaemonStartsDegradedOnFullDisk(t *testing.T) {
	t.Setenv("BINKY_PORT_LEASES", t.TempDir())
	home, free := fullHome(t, func(home string) {
		r, err := registry.Open(context.Background(), filepath.Join(home, registry.FileName))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	})
	ctx, cancel := context.WithCancel(context.Background())
	d := New(Options{Home: home, Logger: hclog.NewNullLogger(), ProxyAddr: "off", TrimAfter: -1, NoCgroups: true})
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("daemon run: %v", err)
		}
	}()
	c := &api.Client{Home: home}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var p api.PingResult
		err := c.Call(ctx, api.OpPing, nil, api.Handlers{}, &p)
		if err == nil {
			break
		}
		select {
		case err := <-ran:
			t.Fatalf("the daemon did not start on a full disk: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not answer within 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	want := "binky's home " + home + " is on a full disk (no space left on device); the daemon supervises running worlds but refuses new work until space is freed"
	var st api.StatusResult
	if err := c.Call(ctx, api.OpStatus, api.StatusArgs{}, api.Handlers{}, &st); err != nil {
		t.Fatalf("status on a full disk: %v", err)
	}
	if st.Degraded == nil || st.Degraded.Reason != want {
		t.Fatalf("status.degraded = %+v; want the reason %q", st.Degraded, want)
	}
	ram := 10.0
	err := c.Call(ctx, api.OpReserve, api.ReserveArgs{RAM: &ram}, api.Handlers{}, nil)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeConflict || ae.Message != want {
		t.Fatalf("reserve --ram on a full disk: %v; want the refusal %q", err, want)
	}
	if err := c.Call(ctx, api.OpReserve, api.ReserveArgs{}, api.Handlers{}, nil); err != nil {
		t.Errorf("reserve (showing the bounds, no write) on a full disk: %v", err)
	}

	free()
	if err := c.Call(ctx, api.OpReserve, api.ReserveArgs{RAM: &ram}, api.Handlers{}, nil); err != nil {
		t.Fatalf("reserve --ram once space is freed: %v", err)
	}
	st = api.StatusResult{}
	if err := c.Call(ctx, api.OpStatus, api.StatusArgs{}, api.Handlers{}, &st); err != nil || st.Degraded != nil {
		t.Fatalf("status once space is freed: degraded %+v, %v; want not degraded", st.Degraded, err)
	}
	if b, err := os.ReadFile(filepath.Join(home, ports.HomeIDFile)); err != nil || !strings.Contains(string(b), d.homeID) {
		t.Errorf("home.id once space is freed: %q, %v; want the home id %s", b, err, d.homeID)
	}
	if _, err := os.Stat(filepath.Join(home, "events.log")); err != nil {
		t.Errorf("events.log once space is freed: %v", err)
	}
}
