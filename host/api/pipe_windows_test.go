//go:build windows

package api

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/internal/wine"
)

func TestPipeOwnerOnly(t *testing.T) {
	wine.Skip(t, "a go-winio pipe server's Accept never returns (Wine 8 does not complete its overlapped ConnectNamedPipe), so a call hangs")
	home := t.TempDir()
	id := fmt.Sprintf("test%d%d", os.Getpid(), time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(home, homeIDFile), []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := Endpoint(home), `\\.\pipe\binky-`+id; got != want {
		t.Fatalf("Endpoint = %s; want %s", got, want)
	}
	ln, err := ListenPipe(id)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if second, err := ListenPipe(id); err == nil {
		second.Close()
		t.Fatal("a second listener on the same pipe name succeeded")
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Fprintf(c, `{"result":%q}`+"\n", strings.TrimSpace(line))
	}()
	var got string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := (&Client{Home: home}).Call(ctx, "ping", nil, Handlers{}, &got); err != nil {
		t.Fatalf("call over the pipe: %v", err)
	}
	if !strings.Contains(got, `"op":"ping"`) {
		t.Errorf("echoed request = %s", got)
	}
	sddl, err := OwnerOnlySDDL()
	if err != nil || !strings.HasPrefix(sddl, "O:S-1-") || !strings.Contains(sddl, "D:P(A;;GA;;;S-1-") {
		t.Errorf("OwnerOnlySDDL = %q, %v", sddl, err)
	}
}

func TestNoDaemonWithoutHomeID(t *testing.T) {
	err := (&Client{Home: t.TempDir()}).Call(context.Background(), "ping", nil, Handlers{}, nil)
	if err == nil || !strings.Contains(err.Error(), ErrNoDaemon.Error()) {
		t.Fatalf("call with no home id = %v; want %v", err, ErrNoDaemon)
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, homeIDFile), []byte("nobodylistens\n"), 0o600)
	err = (&Client{Home: home}).Call(context.Background(), "ping", nil, Handlers{}, nil)
	if err == nil || !strings.Contains(err.Error(), ErrNoDaemon.Error()) {
		t.Fatalf("call with no pipe = %v; want %v", err, ErrNoDaemon)
	}
}
