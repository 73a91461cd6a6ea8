package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// envAdapter answers resolve with what go-plugin handed the adapter in its
// environment: the port range and whether a client certificate came.
type envAdapter struct{ echo }

func (envAdapter) Resolve(_ context.Context, r *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	_, cert := os.LookupEnv("PLUGIN_CLIENT_CERT")
	return &sdk.ResolveResponse{Address: "env://" + r.Slice, Values: map[string]string{
		"min":  os.Getenv("PLUGIN_MIN_PORT"),
		"max":  os.Getenv("PLUGIN_MAX_PORT"),
		"cert": strconv.FormatBool(cert),
	}}, nil
}

// selfAdapter is the test binary started as a fake adapter built on
// sdk.Run, on every platform (fake keeps to Unix).
func selfAdapter(t *testing.T, mode string) *Binary {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Binary{Path: self, Env: append(MinimalEnv(os.Environ()), fakeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")}
}

// TestSessionMTLSAndPortRange: an RPC adapter the client starts gets the
// client's certificate (AutoMTLS) and binky's port range in its
// environment, answers calls over the mutual TLS, and refuses a
// connection that does not present the client's certificate.
func TestSessionMTLSAndPortRange(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := selfAdapter(t, "env").StartRPC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := Resolve(ctx, s, &sdk.ResolveRequest{Target: sdk.Target{Slice: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"min": strconv.Itoa(RPCMinPort), "max": strconv.Itoa(RPCMaxPort), "cert": "true"}
	for k, v := range want {
		if got.Values[k] != v {
			t.Errorf("adapter's %s: got %q; want %q", k, got.Values[k], v)
		}
	}

	// A stranger that speaks go-plugin's net/rpc but has not the
	// client's certificate is refused, whether it comes in plain or with
	// TLS of its own.
	addr := s.pc.ReattachConfig().Addr
	stranger := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: sdk.Handshake,
		Plugins:         sdk.PluginSet(nil),
		Logger:          hclog.NewNullLogger(),
		// Test: the stranger's Kill leaves the adapter alone.
		Reattach: &plugin.ReattachConfig{Protocol: plugin.ProtocolNetRPC, Addr: addr, Pid: s.cmd.Process.Pid, Test: true},
	})
	if proto, err := stranger.Client(); err == nil {
		if _, err := proto.Dispense(sdk.PluginName); err == nil {
			t.Errorf("a stranger without the certificate dispensed the adapter at %s %s; want it refused", addr.Network(), addr)
		}
		proto.Close()
	}
	conn, err := net.DialTimeout(addr.Network(), addr.String(), 5*time.Second)
	if err != nil {
		t.Fatalf("dial the adapter at %s: %v", addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// TLS 1.3 ends the client's handshake first; the server's refusal
	// comes on the first read.
	_, err = tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}).Read(make([]byte, 1))
	conn.Close()
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("a TLS client without the certificate read from the adapter: %v; want the connection refused", err)
	}

	// The session still works after the strangers.
	if _, err := s.CallRaw(ctx, sdk.CallDescribe, []byte(`{"protocol":1}`)); err != nil {
		t.Errorf("describe after the strangers: %v", err)
	}
}
