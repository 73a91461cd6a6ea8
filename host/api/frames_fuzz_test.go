package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/binkyhq/binky/internal/wine"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// fakeDaemon listens on home's socket and answers every call with reply
// (after reading the request line), then hangs up.
func fakeDaemon(t *testing.T, home string, reply []byte) {
	t.Helper()
	ln, err := net.Listen("unix", Socket(home))
	if err != nil {
		t.Fatalf("listen on %s: %v", Socket(home), err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadBytes('\n')
		c.Write(reply)
	}()
}

// FuzzClientFrames: whatever the daemon streams back, Call never panics,
// returns once the daemon hangs up, and reports success only for a stream
// holding a result frame and a daemon error only for one holding an error
// frame.
func FuzzClientFrames(f *testing.F) {
	wine.Skip(f, "Wine 8 has no AF_UNIX sockets")
	f.Add([]byte("{\"progress\":{\"step\":\"ports\",\"elapsed_ms\":3}}\n{\"result\":{\"worlds\":[]}}\n"))
	f.Add([]byte("{\"output\":{\"check\":0,\"stream\":\"stdout\",\"data\":\"hi\"}}\n{\"error\":{\"code\":\"failed\",\"message\":\"no\"}}\n"))
	f.Add([]byte("{\"result\":null}\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte("not json\n"))
	f.Add([]byte("{\"progress\":{\"step\":1}}\n"))
	f.Add([]byte("{\"result\":{\"worlds\":[{\"project\":7}]}}"))
	dir, err := os.MkdirTemp("", "bkfz")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	f.Fuzz(func(t *testing.T, reply []byte) {
		home := filepath.Join(dir, "h"+time.Now().Format("150405.000000000"))
		os.Mkdir(home, 0o700)
		defer os.RemoveAll(home)
		fakeDaemon(t, home, reply)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out struct {
			Worlds []map[string]any `json:"worlds"`
		}
		progress := 0
		err := (&Client{Home: home}).Call(ctx, OpStatus, StatusArgs{}, Handlers{
			Progress: func(Progress) { progress++ },
			Output:   func(Output) {},
		}, &out)
		if ctx.Err() != nil {
			t.Fatalf("Call on reply %q did not return after the daemon hung up", reply)
		}
		var sawResult, sawError bool
		for _, line := range bytes.Split(reply, []byte("\n")) {
			var fr Frame
			if json.Unmarshal(line, &fr) != nil {
				continue
			}
			switch {
			case fr.Progress != nil, fr.Output != nil:
			case fr.Error != nil:
				sawError = true
			default:
				sawResult = true
			}
		}
		var de *Error
		if err == nil && !sawResult {
			t.Fatalf("Call succeeded on %q, which holds no result frame", reply)
		}
		if errors.As(err, &de) && !sawError {
			t.Fatalf("Call returned a daemon error %v on %q, which holds no error frame", err, reply)
		}
	})
}

// FuzzRequestArgs: a request line the daemon reads decodes, or fails,
// without panicking, and every op's arguments survive a round trip: what
// the daemon decodes is what a client encoding it again would send.
func FuzzRequestArgs(f *testing.F) {
	f.Add([]byte(`{"op":"up","args":{"dir":"/r","branch":"feat/x","env":{"A":"b"},"no_wait":true}}`))
	f.Add([]byte(`{"op":"remove","args":{"name":"w","force":true,"env":{}}}`))
	f.Add([]byte(`{"op":"status","args":{"here":true,"dir":"/r"}}`))
	f.Add([]byte(`{"op":"reset","args":{"name":"w","service":"db"}}`))
	f.Add([]byte(`{"op":"up","args":[1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var req Request
		if json.Unmarshal(line, &req) != nil {
			return
		}
		for _, v := range []any{&UpArgs{}, &DownArgs{}, &RemoveArgs{}, &EnvArgs{}, &ResetArgs{}, &VerifyArgs{}, &StatusArgs{}, &GoldenArgs{}} {
			if len(req.Args) == 0 || json.Unmarshal(req.Args, v) != nil {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("re-encode %T decoded from %q: %v", v, req.Args, err)
			}
			again := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			if err := json.Unmarshal(b, again); err != nil {
				t.Fatalf("decode %T re-encoded as %q: %v", v, b, err)
			}
			if !reflect.DeepEqual(normalize(v), normalize(again)) {
				t.Fatalf("%T from %q: %+v; after a round trip %+v", v, req.Args, v, again)
			}
		}
	})
}

// normalize treats an empty map as absent, as omitempty does.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var m any
	json.Unmarshal(b, &m)
	return m
}
