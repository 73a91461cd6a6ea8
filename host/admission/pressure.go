package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// Source reads the machine's pressure. Production uses System; tests inject
// their own.
type Source interface {
	Sample(ctx context.Context) (Sample, error)
}

// System reads free RAM from /proc/meminfo (MemAvailable: what can be had
// without swapping, page cache included) and free disk by statfs of Dir.
// Both are one small read each, so sampling costs nothing worth a
// dependency: gopsutil would read the same two things. Where /proc is
// missing (macOS, Windows) RAM is reported unknown and only max_parallel
// and the disk bound apply.
type System struct {
	Dir string // a directory on the filesystem whose free space counts
}

// Sample implements Source.
func (s System) Sample(ctx context.Context) (Sample, error) {
	var out Sample
	total, avail, err := memInfo()
	if err == nil {
		out.MemTotal, out.MemAvailable = total, avail
	}
	dt, df, derr := diskFree(s.Dir)
	if derr == nil {
		out.DiskTotal, out.DiskFree = dt, df
	}
	if err != nil && derr != nil {
		return out, fmt.Errorf("read memory and disk pressure: %v; %v", err, derr)
	}
	return out, nil
}

// File reads a Sample as JSON from a file on every call. It is the daemon's
// test hook (BINKY_TEST_PRESSURE): end-to-end tests write the file to
// play memory and disk pressure without causing any.
//
//	{"mem_total": 1000, "mem_available": 90, "disk_total": 1e12, "disk_free": 3.1e9}
type File struct{ Path string }

type fileSample struct {
	MemTotal     float64 `json:"mem_total"`
	MemAvailable float64 `json:"mem_available"`
	DiskTotal    float64 `json:"disk_total"`
	DiskFree     float64 `json:"disk_free"`
}

// Sample implements Source.
func (f File) Sample(context.Context) (Sample, error) {
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return Sample{}, fmt.Errorf("read test pressure file: %w", err)
	}
	var fs fileSample
	if err := json.Unmarshal(b, &fs); err != nil {
		return Sample{}, fmt.Errorf("read test pressure file %s: %w", f.Path, err)
	}
	return Sample{
		MemTotal: uint64(fs.MemTotal), MemAvailable: uint64(fs.MemAvailable),
		DiskTotal: uint64(fs.DiskTotal), DiskFree: uint64(fs.DiskFree),
	}, nil
}

var (
	_ Source = System{}
	_ Source = File{}
)
