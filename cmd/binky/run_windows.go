//go:build windows

package main

import (
	"context"

	"github.com/binkyhq/binky/host/api"
)

// watchResize: binky run -t is not supported on Windows yet (the daemon
// refuses it), so there is no size to follow.
func watchResize(ctx context.Context, fd int, in *api.InputWriter) {}
