package proxy

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the backend service: with this variable set it
// runs a small HTTP server in its own process, prints its port, and serves
// until killed. Tests route the proxy to such real processes.
const backendEnv = "BINKY_PROXY_TEST_BACKEND"

func TestMain(m *testing.M) {
	if spec := os.Getenv(fetchEnv); spec != "" {
		os.Exit(runFetch(spec))
	}
	if name := os.Getenv(backendEnv); name != "" {
		if err := runBackend(name); err != nil {
			fmt.Fprintln(os.Stderr, "backend:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echo is what the backend's / answers, so tests see what arrived.
type echo struct {
	Name    string            `json:"name"`
	Host    string            `json:"host"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

func runBackend(name string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	release := make(chan struct{}, 16)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		e := echo{Name: name, Host: r.Host, Path: r.URL.Path, Headers: map[string]string{}}
		for _, k := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"} {
			e.Headers[k] = r.Header.Get(k)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e)
	})
	// /sse sends "one", then waits for /release before sending "two": the
	// second event exists only after the client has seen the first.
	// /chunked does the same as a plain chunked text response.
	stream := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "text/plain")
		}
		w.Header().Set("Cache-Control", "no-cache")
		fl := w.(http.Flusher)
		fmt.Fprint(w, "data: one\n\n")
		fl.Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: two\n\n")
		fl.Flush()
	}
	mux.HandleFunc("/sse", stream)
	mux.HandleFunc("/chunked", stream)
	mux.HandleFunc("/release", func(w http.ResponseWriter, r *http.Request) {
		release <- struct{}{}
		_, _ = io.WriteString(w, "released\n")
	})
	mux.HandleFunc("/ws", serveWebSocketEcho)
	return http.Serve(ln, mux)
}

// startBackend runs the test binary as a backend process named name and
// returns its address; the process is killed at cleanup (or by stop).
func startBackend(t *testing.T, name string) (addr string, stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), backendEnv+"="+name)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start backend %s: %v", name, err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read backend %s address: %v", name, err)
	}
	return strings.TrimSpace(line), stop
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// serveWebSocketEcho is a minimal RFC 6455 server: it echoes text frames.
func serveWebSocketEcho(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		http.Error(w, "websocket only", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		wsAccept(r.Header.Get("Sec-WebSocket-Key")))
	if rw.Flush() != nil {
		return
	}
	for {
		op, msg, err := wsRead(rw.Reader)
		if err != nil || op == 8 {
			return
		}
		if err := wsWrite(conn, op, msg, false); err != nil {
			return
		}
	}
}

// wsRead reads one unfragmented frame, unmasking it if masked.
func wsRead(r *bufio.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	op = h[0] & 0x0f
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		return 0, nil, errors.New("frame too large")
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err = io.ReadFull(r, mask[:]); err != nil {
			return 0, nil, err
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return op, payload, nil
}

// wsWrite writes one final frame; clients must mask.
func wsWrite(w io.Writer, op byte, payload []byte, mask bool) error {
	hdr := []byte{0x80 | op}
	mbit := byte(0)
	if mask {
		mbit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, mbit|byte(n))
	case n < 1<<16:
		hdr = append(hdr, mbit|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, mbit|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	body := payload
	if mask {
		key := [4]byte{0x1f, 0x2e, 0x3d, 0x4c}
		hdr = append(hdr, key[:]...)
		body = make([]byte, len(payload))
		for i := range payload {
			body[i] = payload[i] ^ key[i%4]
		}
	}
	_, err := w.Write(append(hdr, body...))
	return err
}

// wsDial opens a WebSocket to path on the proxy at addr, presenting host.
func wsDial(t *testing.T, addr, host, path string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial proxy %s: %v", addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	key := base64.StdEncoding.EncodeToString([]byte("binky-test-key-1"))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host, key)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read websocket handshake: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("websocket handshake status: got %d; want 101", resp.StatusCode)
	}
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), wsAccept(key); got != want {
		t.Fatalf("Sec-WebSocket-Accept: got %q; want %q", got, want)
	}
	return conn, br
}

func itoa(n int) string { return strconv.Itoa(n) }
