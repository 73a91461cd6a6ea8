//go:build !linux

package supervisor

import (
	"syscall"
	"time"
)

// WorldTree needs /proc: elsewhere it finds nothing (the marker scan and
// the ports a world owns still do).
func WorldTree([]int) []Proc { return nil }

// Survivors finds nothing where WorldTree found nothing.
func Survivors([]Proc) []Proc { return nil }

// EndProcs has nothing to end where WorldTree found nothing.
func EndProcs([]Proc, syscall.Signal, time.Duration) []int { return nil }
