//go:build !windows

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// fakeDaemon serves home's socket: reply gives the n-th request's answer
// line (nil: hang up without one), and ops lists the ops asked.
type fakeDaemon struct {
	mu  sync.Mutex
	ops []string
}

func serve(t *testing.T, home string, reply func(n int, op string) []byte) *fakeDaemon {
	t.Helper()
	ln, err := net.Listen("unix", api.Socket(home))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeDaemon{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			var req api.Request
			json.Unmarshal(line, &req)
			f.mu.Lock()
			f.ops = append(f.ops, req.Op)
			n := len(f.ops) - 1
			f.mu.Unlock()
			if b := reply(n, req.Op); b != nil {
				c.Write(append(b, '\n'))
			}
			c.Close()
		}
	}()
	return f
}

func (f *fakeDaemon) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// TestAsk: a running daemon is asked once, with no ping first; its error
// is the answer; a daemon that hung up is asked again after a ping.
func TestAsk(t *testing.T) {
	ping := []byte(`{"result":{"pid":1,"version":"test"}}`)
	tests := []struct {
		name    string
		reply   func(n int, op string) []byte
		wantErr string
		want    []string
	}{
		{"answers", func(int, string) []byte { return []byte(`{"result":{"project":"p"}}`) }, "", []string{"env"}},
		{"refuses", func(int, string) []byte { return []byte(`{"error":{"code":"not_found","message":"no world"}}`) }, "no world", []string{"env"}},
		{"hangs up once", func(n int, op string) []byte {
			switch {
			case n == 0:
				return nil
			case op == api.OpPing:
				return ping
			}
			return []byte(`{"result":{"project":"p"}}`)
		}, "", []string{"env", "ping", "env"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, err := os.MkdirTemp("", "bka")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(home)
			f := serve(t, home, tt.reply)
			var res api.EnvResult
			err = Ask(context.Background(), home, func(cl *api.Client) error {
				return cl.Call(context.Background(), api.OpEnv, api.EnvArgs{}, api.Handlers{}, &res)
			})
			var ae *api.Error
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Ask: %v", err)
			case tt.wantErr != "" && (!errors.As(err, &ae) || ae.Message != tt.wantErr):
				t.Fatalf("Ask = %v; want the daemon's %q", err, tt.wantErr)
			case tt.wantErr == "" && res.Project != "p":
				t.Errorf("result %+v; want project p", res)
			}
			if got := f.asked(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("the daemon was asked %q; want %q", got, tt.want)
			}
		})
	}
}
