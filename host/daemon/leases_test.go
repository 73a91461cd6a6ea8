package daemon

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/ports"
	"github.com/binkyhq/binky/host/registry"
)

// TestSyncLeasesRetriesInBackground: while the lease store is refused,
// the daemon's lease sync logs why and waits to try again (it runs beside
// the daemon's start, never before it), ends with the daemon, and gets
// through once the store is fixed.
func TestSyncLeasesRetriesInBackground(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	reg, err := registry.Open(ctx, filepath.Join(home, "binky.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	id, err := reg.HomeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ports.WriteHomeID(home, id); err != nil {
		t.Fatal(err)
	}
	leaseDir := filepath.Join(t.TempDir(), "leases")
	if err := os.WriteFile(leaseDir, nil, 0o644); err != nil { // a file: refused
		t.Fatal(err)
	}
	l, err := ports.OpenLeases(leaseDir, ports.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ports.New(reg, ports.Options{Leases: l, HomeID: id, HomeDir: home})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	d := &Daemon{ports: a, log: hclog.New(&hclog.LoggerOptions{Output: pw})}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		d.syncLeases(runCtx)
		close(done)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.Contains(line, "sync port leases") || !strings.Contains(line, "port lease directory "+leaseDir+" is refused") {
		t.Errorf("first log line %q, %v; want the sync's warning naming the refused directory", line, err)
	}
	cancel() // the daemon stops: the sync, waiting to try again, ends
	<-done
	if a.LeasesSynced() {
		t.Fatal("LeasesSynced with a refused store")
	}

	if err := os.Remove(leaseDir); err != nil {
		t.Fatal(err)
	}
	d.log = hclog.NewNullLogger()
	d.syncLeases(ctx)
	if !a.LeasesSynced() {
		t.Error("LeasesSynced after a sync with the store fixed = false")
	}
}
