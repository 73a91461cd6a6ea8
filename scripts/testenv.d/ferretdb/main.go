// Command binky-testenv-ferretdb runs FerretDB (the MongoDB wire protocol
// over SQLite) on one loopback port for the mongodb adapter's tests. It is
// not MongoDB: scripts/testenv builds and starts it
// (scripts/testenv.d/ferretdb.sh), and nothing else uses it. FerretDB's
// own cmd/ferretdb panics when built with go install (it wants a version
// file), so this embeds it through its ferretdb package instead.
//
//	binky-testenv-ferretdb -addr 127.0.0.1:27017 -dir DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:27017", "loopback host:port to listen on")
	dir := flag.String("dir", "", "directory for FerretDB's SQLite files")
	flag.Parse()
	if !strings.HasPrefix(*addr, "127.0.0.1:") || *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb: want -addr 127.0.0.1:PORT and -dir DIR")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *addr},
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb: start:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "ferretdb: listening on %s, data in %s\n", *addr, abs)
	f.Run(ctx)
}
