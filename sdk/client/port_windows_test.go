package client

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestRPCListenerPortInRange: on Windows go-plugin listens on loopback TCP;
// the adapter's port lies in [RPCMinPort, RPCMaxPort], outside binky's
// default world range, and a port of the range something holds is skipped.
func TestRPCListenerPortInRange(t *testing.T) {
	// Hold the bottom of the range when it is free, as another program
	// might.
	if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(RPCMinPort)); err == nil {
		defer l.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := selfAdapter(t, "env").StartRPC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.pc.ReattachConfig().Addr
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		t.Fatalf("the adapter listens on %s %s; want loopback TCP", addr.Network(), addr)
	}
	t.Logf("the adapter listens on %s", tcp)
	if !tcp.IP.IsLoopback() || tcp.Port <= RPCMinPort || tcp.Port > RPCMaxPort {
		t.Errorf("the adapter listens on %s; want 127.0.0.1 and a port in %d-%d other than the held %d", tcp, RPCMinPort, RPCMaxPort, RPCMinPort)
	}
	if _, err := s.CallRaw(ctx, "describe", []byte(`{"protocol":1}`)); err != nil {
		t.Errorf("describe: %v", err)
	}
}
