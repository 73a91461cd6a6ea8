//go:build !linux && !windows && !darwin && !freebsd

package ports

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// EphemeralRange cannot be read on this platform: it returns an error
// wrapping errors.ErrUnsupported.
func EphemeralRange(context.Context) (Ephemeral, error) {
	return Ephemeral{}, fmt.Errorf("read the ephemeral port range on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
