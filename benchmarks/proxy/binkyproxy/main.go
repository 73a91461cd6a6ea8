// Command binkyproxy runs Binky's embedded proxy alone, with one route
// (bench.localhost → the backend), for the benchmark.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	_ "net/http/pprof" // served on -pprof only
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/proxy"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "proxy listen address")
	backend := flag.String("backend", "127.0.0.1:18080", "backend address")
	host := flag.String("host", "bench.localhost", "routed hostname")
	pprofAddr := flag.String("pprof", "", "serve /debug/pprof/ on this loopback address (off when empty)")
	flag.Parse()
	if *pprofAddr != "" {
		go func() {
			fmt.Fprintln(os.Stderr, "binkyproxy: pprof:", http.ListenAndServe(*pprofAddr, nil))
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: "binkyproxy", Level: hclog.Warn, Output: os.Stderr})
	p := proxy.New(proxy.Options{Logger: log, Addr: *addr, FallbackAddr: "none"})
	p.Set([]proxy.Route{{Host: *host, Target: *backend, State: proxy.StateRunning, Project: "bench", Worktree: "main", Service: "bench"}})
	if err := p.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "binkyproxy:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	p.Close()
}
