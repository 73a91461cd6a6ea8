// Command binky-testenv-kfake runs kfake, franz-go's in-memory
// Kafka-protocol cluster, on one loopback port for the kafka adapter's
// tests. It is not Apache Kafka: scripts/testenv builds and starts it
// (scripts/testenv.d/kfake.sh), and nothing else uses it.
//
//	binky-testenv-kfake -addr 127.0.0.1:9092
//
// kfake binds 127.0.0.1 itself, so only the port of -addr is free.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "loopback host:port to listen on")
	flag.Parse()
	host, port, err := net.SplitHostPort(*addr)
	if err != nil || host != "127.0.0.1" {
		fail("bad -addr %q: want 127.0.0.1:PORT (kfake listens on loopback only)", *addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		fail("bad -addr port %q: %v", port, err)
	}
	c, err := kfake.NewCluster(kfake.Ports(p), kfake.NumBrokers(1))
	if err != nil {
		fail("start kfake on %s: %v", *addr, err)
	}
	fmt.Fprintf(os.Stderr, "kfake: listening on %v\n", c.ListenAddrs())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	c.Close()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kfake: "+format+"\n", args...)
	os.Exit(1)
}
