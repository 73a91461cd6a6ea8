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

// TestPipeOwnerOnly listens as the daemon does and calls it: the first
// call after listening must be answered (go-winio's placeholder instance,
// taken by ListenPipe; before that, under Wine 8 the first client
// connected to the placeholder and hung), then calls in sequence and in
// parallel.
func TestPipeOwnerOnly(t *testing.T) {
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
	if wine.Under() {
		// Wine 8 does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE (go-winio
		// makes its first instance with FILE_CREATE), so a second listener
		// succeeds there; Windows refuses it.
		t.Log("under Wine: the second-listener check is skipped: Wine 8 does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE (docs/windows.md)")
	} else if second, err := ListenPipe(id); err == nil {
		second.Close()
		t.Fatal("a second listener on the same pipe name succeeded")
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, `{"result":%q}`+"\n", strings.TrimSpace(line))
			}()
		}
	}()
	call := func() error {
		var got string
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := (&Client{Home: home}).Call(ctx, "ping", nil, Handlers{}, &got); err != nil {
			return err
		}
		if !strings.Contains(got, `"op":"ping"`) {
			return fmt.Errorf("echoed request = %s", got)
		}
		return nil
	}
	if err := call(); err != nil {
		t.Fatalf("first call over the pipe: %v", err)
	}
	for i := 0; i < 10; i++ {
		if err := call(); err != nil {
			t.Fatalf("call %d in sequence: %v", i+2, err)
		}
	}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() { errs <- call() }()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Errorf("parallel call: %v", err)
		}
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
