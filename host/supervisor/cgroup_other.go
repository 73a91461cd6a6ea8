//go:build !linux

package supervisor

import (
	"errors"
	"syscall"
	"time"
)

// Cgroups tracks each world's processes in a cgroup v2 of its own; only
// Linux has them, so here OpenCgroups always fails and the supervisor uses
// process groups and the BINKY_SERVICE marker.
type Cgroups struct{}

// OpenCgroups is unsupported on this platform.
func OpenCgroups(string) (*Cgroups, error) {
	return nil, errors.New("cgroups are linux only; using process groups")
}

// Root is empty here.
func (c *Cgroups) Root() string { return "" }

// Procs is empty here.
func (c *Cgroups) Procs(string, string) []int { return nil }

// End does nothing here.
func (c *Cgroups) End(string, string, time.Duration) []int { return nil }

// Prune does nothing here.
func (c *Cgroups) Prune() {}

// Remove does nothing here.
func (c *Cgroups) Remove(string, string) {}

func (c *Cgroups) intoCgroup(*syscall.SysProcAttr, Key) (func(), error) { return func() {}, nil }

func usedCgroup(*syscall.SysProcAttr) bool { return false }
