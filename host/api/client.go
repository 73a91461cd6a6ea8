package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// SocketName is the daemon's socket file inside BINKY_HOME.
const SocketName = "daemon.sock"

// MaxLine bounds one protocol line (16 MiB: a status of many worlds).
const MaxLine = 16 << 20

// ErrNoDaemon means nothing answers on the socket.
var ErrNoDaemon = errors.New("no daemon is running")

// WireVersion is the protocol's version: a client and a daemon (or a
// remote host's binky, reached over ssh) speak when theirs are equal. It
// changes when a frame or an op's arguments change incompatibly.
const WireVersion = 1

// Client talks to the daemon of one BINKY_HOME.
type Client struct {
	Home string
	// Dial, when set, connects instead of the home's socket: the seam a
	// remote host's daemon is reached through (ssh … binky system
	// dial-stdio, host/remote). Where names it in errors.
	Dial  func(ctx context.Context) (net.Conn, error)
	Where string
}

// Socket is the socket path of home.
func Socket(home string) string { return filepath.Join(home, SocketName) }

// DialHome connects to home's daemon (its socket; a named pipe on
// Windows), for a caller that bridges the connection elsewhere (binky
// system dial-stdio).
func DialHome(ctx context.Context, home string) (net.Conn, error) { return dial(ctx, home) }

// Handlers receive what the daemon streams before its final answer.
type Handlers struct {
	Progress func(Progress)
	Output   func(Output)
	// Attach is called once, when a run that asked for stdin starts its
	// command: from then on the handler may send input with in (from
	// another goroutine; in is safe for concurrent use and fails once the
	// call ended).
	Attach func(a Attach, in *InputWriter)
}

// InputWriter sends Input lines to the daemon after the request.
type InputWriter struct {
	mu   sync.Mutex
	conn io.Writer
}

// Send writes one Input line.
func (w *InputWriter) Send(in Input) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.conn.Write(append(b, '\n'))
	return err
}

// Call sends one request and waits for the final frame, passing progress and
// output frames to h. The result is decoded into out when out is not nil.
func (c *Client) Call(ctx context.Context, op string, args any, h Handlers, out any) error {
	if c.Dial != nil {
		conn, err := c.Dial(ctx)
		if err != nil {
			return err
		}
		return c.exchange(ctx, conn, op, args, h, out)
	}
	conn, err := dial(ctx, c.Home)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isRefused(err) {
			return fmt.Errorf("%w (socket %s)", ErrNoDaemon, Endpoint(c.Home))
		}
		return fmt.Errorf("connect to daemon at %s: %w", Endpoint(c.Home), err)
	}
	return c.exchange(ctx, conn, op, args, h, out)
}

// exchange sends the request on conn and reads frames to the final one.
func (c *Client) exchange(ctx context.Context, conn net.Conn, op string, args any, h Handlers, out any) (err error) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var b []byte
	if args != nil {
		if b, err = json.Marshal(args); err != nil {
			return fmt.Errorf("encode %s request: %w", op, err)
		}
	}
	line := requestLine(op, b)
	// A daemon that refuses the caller answers before reading: a failed
	// write still leaves its answer to read.
	_, werr := conn.Write(append(line, '\n'))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		// The answer, decoded once (see onlyResult); anything else, or
		// a result out cannot hold, the slow way below, for its errors.
		if v, ok := onlyResult(sc.Bytes()); ok && out != nil {
			if rd, ok := out.(ResultDecoder); ok && rd.DecodeResult(v) == nil {
				return nil
			}
			if json.Unmarshal(v, out) == nil {
				return nil
			}
		}
		var f Frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return fmt.Errorf("daemon sent a line that is not JSON: %.200q", sc.Bytes())
		}
		switch {
		case f.Progress != nil:
			if h.Progress != nil {
				h.Progress(*f.Progress)
			}
		case f.Output != nil:
			if h.Output != nil {
				h.Output(*f.Output)
			}
		case f.Attach != nil:
			if h.Attach != nil {
				h.Attach(*f.Attach, &InputWriter{conn: conn})
			}
		case f.Error != nil:
			return f.Error
		default:
			if out != nil && len(f.Result) > 0 {
				if err := json.Unmarshal(f.Result, out); err != nil {
					return fmt.Errorf("decode %s result: %w", op, err)
				}
			}
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if werr != nil {
		return fmt.Errorf("send %s request: %w", op, werr)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s reply: %w", op, err)
	}
	if c.Where != "" {
		return fmt.Errorf("%s closed the connection before answering %s", c.Where, op)
	}
	return fmt.Errorf("daemon closed the connection before answering %s (see %s)", op, filepath.Join(c.Home, "daemon.log"))
}

// resultPrefix begins a final answer as the daemon writes it.
var resultPrefix = []byte(`{"result":`)

// onlyResult returns V of a line {"result":V}, written as the daemon
// writes it. The value is decoded straight into the caller's result:
// decoding a Frame (whose RawMessage result is scanned twice) and then
// the result again scanned a status of 50 worlds four times, the largest
// cost of `binky status` after kong (issue 44). The line is exactly such
// a frame only when V is one JSON value, which json.Unmarshal checks
// before it decodes a byte.
func onlyResult(line []byte) ([]byte, bool) {
	if !bytes.HasPrefix(line, resultPrefix) || !bytes.HasSuffix(line, []byte("}")) {
		return nil, false
	}
	return line[len(resultPrefix) : len(line)-1], true
}

// requestLine is json.Marshal(Request{Op: op, Args: args}) for args that
// json.Marshal wrote, without scanning args again to compact them (they
// carry the caller's whole environment).
func requestLine(op string, args json.RawMessage) []byte {
	o, _ := json.Marshal(op)
	line := make([]byte, 0, len(o)+len(args)+len(`{"op":,"args":}`))
	line = append(append(line, `{"op":`...), o...)
	if len(args) > 0 {
		line = append(append(line, `,"args":`...), args...)
	}
	return append(line, '}')
}
