//go:build !linux

package supervisor

import "time"

func markedCPU(string) (time.Duration, bool) { return 0, false }
