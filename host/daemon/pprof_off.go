//go:build !pprof

package daemon

import "context"

// startPprof only says why BINKY_PPROF (Options.Pprof) does nothing: this
// daemon was built without -tags pprof (pprof.go).
func (d *Daemon) startPprof(context.Context) {
	if addr := d.opts.Pprof; addr != "" {
		d.log.Warn("pprof not served: this daemon was built without profiling; rebuild binkyd with go build -tags pprof", "addr", addr)
	}
}
