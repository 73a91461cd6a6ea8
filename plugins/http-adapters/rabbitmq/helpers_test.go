package rabbitmq

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// adminURL is the management API the tests carve slices from:
// $BINKY_TEST_RABBITMQ_ADMIN, default the machine's RabbitMQ with the
// management plugin scripts/testenv enables.
func adminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_RABBITMQ_ADMIN")
	if u == "" {
		u = "http://guest:guest@127.0.0.1:15672"
	}
	ep, err := httpx.ParseAdminURL(u, example)
	if err != nil {
		t.Fatalf("BINKY_TEST_RABBITMQ_ADMIN: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if _, err := httpx.New().Call(ctx, ep, httpx.Request{Method: http.MethodGet, URL: ep.URL(nil, "api", "overview")}, nil); err != nil {
		adaptertest.MissingServer(t, "the RabbitMQ management API is not reachable ("+ep.Scrub(err.Error())+"); run scripts/testenv up (it enables the management plugin on 127.0.0.1:15672), or set BINKY_TEST_RABBITMQ_ADMIN")
	}
	return u
}

func testSlice(suffix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

func tgt(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

// provisionT provisions a slice and destroys it when the test ends.
func provisionT(t *testing.T, a *RabbitMQ, admin, slice string, cfg map[string]any) *sdk.ProvisionResponse {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: tgt(admin, slice, cfg)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
	res, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: tgt(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
	return res
}

func resolveT(t *testing.T, a *RabbitMQ, admin, slice string, cfg map[string]any) *sdk.ResolveResponse {
	t.Helper()
	r, err := a.Resolve(t.Context(), &sdk.ResolveRequest{Header: hdr(), Target: tgt(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("resolve %s: %v", slice, err)
	}
	return r
}

// mgmt GETs a management API path as the admin and returns the status.
func mgmt(t *testing.T, admin string, segments ...string) int {
	t.Helper()
	ep, _ := httpx.ParseAdminURL(admin, example)
	resp, err := httpx.New().Do(t.Context(), ep, httpx.Request{Method: http.MethodGet, URL: ep.URL(nil, segments...)})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

// amqpOpen connects to an amqp:// address the adapter resolved, logs in
// with its user and password (SASL PLAIN) and opens its vhost, speaking
// just enough AMQP 0-9-1 for that. It returns nil when the vhost opened,
// errLogin when the credentials were refused and errVhost when the vhost
// was not allowed.
func amqpOpen(addr string) error {
	a, err := parseAMQP(addr)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(a.host, a.port), 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
		return err
	}
	if _, err := readMethod(rd, 10, 10); err != nil { // connection.start
		return err
	}
	var args bytes.Buffer
	args.Write([]byte{0, 0, 0, 0}) // client-properties: empty table
	shortstr(&args, "PLAIN")
	longstr(&args, "\x00"+a.user+"\x00"+a.password)
	shortstr(&args, "en_US")
	if err := writeMethod(conn, 10, 11, args.Bytes()); err != nil { // start-ok
		return err
	}
	if _, err := readMethod(rd, 10, 30); err != nil { // tune; a refused login closes
		return errLogin
	}
	args.Reset()
	_ = binary.Write(&args, binary.BigEndian, uint16(2047))
	_ = binary.Write(&args, binary.BigEndian, uint32(131072))
	_ = binary.Write(&args, binary.BigEndian, uint16(0))
	if err := writeMethod(conn, 10, 31, args.Bytes()); err != nil { // tune-ok
		return err
	}
	args.Reset()
	shortstr(&args, a.vhost)
	shortstr(&args, "")
	args.WriteByte(0)
	if err := writeMethod(conn, 10, 40, args.Bytes()); err != nil { // open
		return err
	}
	if _, err := readMethod(rd, 10, 41); err != nil { // open-ok, or close 530
		return fmt.Errorf("%w: %v", errVhost, err)
	}
	return nil
}

var (
	errLogin = fmt.Errorf("login refused")
	errVhost = fmt.Errorf("vhost refused")
)

func shortstr(b *bytes.Buffer, s string) { b.WriteByte(byte(len(s))); b.WriteString(s) }
func longstr(b *bytes.Buffer, s string) {
	_ = binary.Write(b, binary.BigEndian, uint32(len(s)))
	b.WriteString(s)
}

func writeMethod(w io.Writer, class, method uint16, args []byte) error {
	var p bytes.Buffer
	_ = binary.Write(&p, binary.BigEndian, class)
	_ = binary.Write(&p, binary.BigEndian, method)
	p.Write(args)
	var f bytes.Buffer
	f.WriteByte(1) // method frame
	_ = binary.Write(&f, binary.BigEndian, uint16(0))
	_ = binary.Write(&f, binary.BigEndian, uint32(p.Len()))
	f.Write(p.Bytes())
	f.WriteByte(0xCE)
	_, err := w.Write(f.Bytes())
	return err
}

// readMethod reads one method frame and wants class.method.
func readMethod(r *bufio.Reader, class, method uint16) ([]byte, error) {
	var h [7]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(h[3:])
	p := make([]byte, size+1)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, err
	}
	if h[0] != 1 || size < 4 {
		return nil, fmt.Errorf("frame type %d", h[0])
	}
	c, m := binary.BigEndian.Uint16(p[0:]), binary.BigEndian.Uint16(p[2:])
	if c != class || m != method {
		return nil, fmt.Errorf("got method %d.%d; want %d.%d", c, m, class, method)
	}
	return p[4:size], nil
}
