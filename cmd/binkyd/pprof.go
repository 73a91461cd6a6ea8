//go:build pprof

package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/hashicorp/go-hclog"
)

// startPprof serves Go's profiling endpoints (/debug/pprof/) on the
// loopback address addr (BINKY_PPROF) until ctx ends, for measuring the
// daemon and its proxy (benchmarks/proxy/run.sh PPROF=1). It exists only
// in a binkyd built with -tags pprof (the profiler adds about 0.4 MiB to a
// binary that is resident whole), is off unless the address is set, and
// refuses one that is not loopback: profiles show request paths and
// command lines.
func startPprof(ctx context.Context, addr string, log hclog.Logger) {
	if addr == "" {
		return
	}
	if err := loopbackOnly(addr); err != nil {
		log.Warn("pprof not served: BINKY_PPROF must be a loopback host:port such as 127.0.0.1:6060", "addr", addr, "error", err)
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("pprof not served: free the port or pick another BINKY_PPROF address", "addr", addr, "error", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof listener stopped", "addr", addr, "error", err)
		}
	}()
	log.Info("pprof served (BINKY_PPROF)", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
}

// loopbackOnly accepts host:port whose host is a loopback IP or localhost.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return errors.New("host is not a loopback address")
	}
	return nil
}
