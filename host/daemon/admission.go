package daemon

import (
	"context"
	"time"

	"github.com/binkyhq/binky/host/admission"
	"github.com/binkyhq/binky/host/supervisor"
)

// startAdmission builds the admission controller (host/admission) over
// the machine's bounds (the registry's, binky reserve) and hands it to the
// engine, which lives it with the worlds (host/world admission.go: the
// queue an up waits in, suspend and resume, the worlds an earlier daemon
// left queued); it samples pressure until ctx ends.
func (d *Daemon) startAdmission(ctx context.Context) {
	var src admission.Source = admission.System{Dir: d.home}
	// Test hooks (docs/admission.md, "Testing"), from Options.
	if f := d.opts.PressureFile; f != "" {
		src = admission.File{Path: f}
		d.log.Warn("admission reads its pressure from a test file", "file", f)
	}
	bounds := &admission.Bounds{Settings: d.reg, Source: src, Logger: d.log}
	bounds.Load(ctx)
	opts := admission.Options{
		Source:  src,
		Limits:  bounds.Limits,
		Suspend: d.w.SuspendKey,
		Resume:  d.w.ResumeKey,
		CPUTime: func(key string) (time.Duration, bool) {
			return supervisor.MarkedCPU(key + "/")
		},
		Live:     d.w.LiveKey,
		Activity: d.w.ActivityKey,
		Logger:   d.log.Named("admission"),
	}
	if iv := d.opts.PressureInterval; iv > 0 {
		opts.Interval, opts.SuspendGap = iv, iv
	}
	d.adm = admission.New(opts)
	d.w.StartAdmission(ctx, d.adm, bounds)
	go d.adm.Run(ctx)
}
