package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

func TestPrintTop(t *testing.T) {
	r := topReading{Worlds: []topRow{
		{Project: "acme", Worktree: "big", State: "up", Cost: &api.Cost{Processes: 3, RSS: 64 << 20, CPUPercent: 12.5,
			Disk:   &api.DiskCost{Untracked: 1 << 20, Ignored: 1 << 20, AgeSeconds: 90},
			Slices: []api.SliceCost{{Service: "db", Bytes: 3 << 20, Approximate: true}}, SliceBytes: 3 << 20}},
		{Project: "acme", Worktree: "idle", State: "down", Cost: &api.Cost{CPUPercent: -1}},
	}}
	var b bytes.Buffer
	printTop(&b, r)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines; want a header and 2 worlds:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"WORLD", "MEMORY", "CPU", "DISK", "SLICES"},
		{"acme/big", "up", "64.0MiB", "12.5%", "2.0MiB (1m ago)", "~3.0MiB"},
		{"acme/idle", "down", "0B", "-", "…"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d = %q; want it to hold %q", i, lines[i], w)
			}
		}
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1536: "1.5KiB", 64 << 20: "64.0MiB", 3 << 30: "3.0GiB"} {
		if got := fmtBytes(n); got != want {
			t.Errorf("fmtBytes(%d) = %q; want %q", n, got, want)
		}
	}
}
