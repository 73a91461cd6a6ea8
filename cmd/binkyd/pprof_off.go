//go:build !pprof

package main

import (
	"context"

	"github.com/hashicorp/go-hclog"
)

// startPprof only says why BINKY_PPROF does nothing: this binkyd was
// built without -tags pprof (pprof.go).
func startPprof(_ context.Context, addr string, log hclog.Logger) {
	if addr != "" {
		log.Warn("pprof not served: this daemon was built without profiling; rebuild binkyd with go build -tags pprof", "addr", addr)
	}
}
