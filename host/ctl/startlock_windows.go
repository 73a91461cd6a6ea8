//go:build windows

package ctl

import "context"

// startLock is a no-op on Windows: a start that loses the race keeps
// pinging for the winner's daemon instead (see Start).
func startLock(context.Context, string) (func(), error) { return func() {}, nil }
