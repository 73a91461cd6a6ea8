package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/hashicorp/go-plugin"
)

// fakeEnv chooses the fake adapter's behaviour when the test binary is
// started as one (Binary.Env carries it; the real host never sets it).
const fakeEnv = "BINKY_CLIENT_FAKE"

func TestMain(m *testing.M) {
	if p := os.Getenv(grandchildEnv); p != "" { // before fakeEnv: it inherits that
		os.Exit(runGrandchild(p))
	}
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	if os.Getenv(hostEnv) == "1" {
		os.Exit(runHost())
	}
	os.Exit(m.Run())
}

type echo struct{ hang bool }

func (echo) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: "echo", RPC: true}, nil
}
func (echo) Provision(context.Context, *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	return &sdk.ProvisionResponse{}, nil
}
func (e echo) Resolve(_ context.Context, r *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	if e.hang {
		time.Sleep(time.Hour)
	}
	return &sdk.ResolveResponse{Address: "echo://" + r.Slice}, nil
}
func (echo) Clone(context.Context, *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "echo cannot clone")
}
func (echo) Destroy(context.Context, *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	return &sdk.DestroyResponse{}, nil
}

// hostEnv makes the test binary a host that starts one RPC session of the
// fake adapter, prints "<adapter pid> <socket dir>" and waits to be killed.
const hostEnv = "BINKY_CLIENT_HOST"

// runHost is the fake host: it starts one RPC session of the fake adapter
// (built on sdk.Run), prints "<adapter pid> <socket dir>" and waits. With
// $BINKY_CLIENT_PIDDIR set the adapter is "spawn", and the host has it
// start a grandchild and prints its pid third.
func runHost() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mode, pidDir := "run", os.Getenv(pidDirEnv)
	env := MinimalEnv(os.Environ())
	if pidDir != "" {
		mode, env = "spawn", append(env, pidDirEnv+"="+pidDir)
	}
	b := &Binary{Path: self, Env: append(env, fakeEnv+"="+mode)}
	s, err := b.StartRPC(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := s.CallRaw(context.Background(), sdk.CallDescribe, []byte(`{"protocol":1}`)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pidDir != "" {
		r, err := Resolve(context.Background(), s, &sdk.ResolveRequest{Target: sdk.Target{Slice: "a"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d %s %s\n", s.cmd.Process.Pid, s.sockDir, strings.TrimPrefix(r.Address, "pid://"))
		time.Sleep(time.Hour)
	}
	fmt.Printf("%d %s\n", s.cmd.Process.Pid, s.sockDir)
	time.Sleep(time.Hour)
	return 0
}

func runFake(mode string) int {
	a := echo{hang: mode == "hang"}
	if mode == "env" {
		sdk.Run(envAdapter{a})
	}
	if mode == "run" {
		sdk.Run(a) // as a real adapter's main is
	}
	if mode == "spawn" {
		sdk.Run(spawner{a})
	}
	if mode == "usage" { // a one-shot adapter that knows no such call
		fmt.Fprintln(os.Stderr, "usage: fake describe|provision|resolve|clone|destroy < request.json")
		return 2
	}
	if len(os.Args) < 2 {
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake, Plugins: sdk.PluginSet(a)})
		return 0
	}
	body, _ := io.ReadAll(os.Stdin)
	reply := sdk.Dispatch(context.Background(), a, os.Args[1], body)
	_, _ = os.Stdout.Write(reply)
	if sdk.DecodeReply(reply, nil) != nil {
		return 1
	}
	return 0
}

func fake(t *testing.T, mode string) *Binary {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake adapter tests run on Unix")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Binary{Path: self, Env: append(MinimalEnv(os.Environ()), fakeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")}
}

// TestTiersAgree: the same requests give byte-identical replies over
// one-shot and RPC, and ok:false surfaces as *sdk.Error with its code.
func TestTiersAgree(t *testing.T) {
	b := fake(t, "ok")
	s, err := b.StartRPC(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reqs := []struct{ call, body string }{
		{sdk.CallDescribe, `{"protocol":1}`},
		{sdk.CallResolve, `{"protocol":1,"slice":"acme_main"}`},
		{sdk.CallClone, `{"protocol":1,"slice":"b","source":"a"}`},
		{sdk.CallProvision, `{"protocol":1}`},
		{sdk.CallProvision, `not json`},
		{sdk.CallResolve, `{"protocol":99,"slice":"x"}`},
	}
	for _, r := range reqs {
		one, err1 := b.CallRaw(t.Context(), r.call, []byte(r.body))
		two, err2 := s.CallRaw(t.Context(), r.call, []byte(r.body))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s %s: one-shot %v, rpc %v", r.call, r.body, err1, err2)
		}
		if !bytes.Equal(one, two) {
			t.Errorf("%s %s: one-shot %s; rpc %s; want the same bytes", r.call, r.body, one, two)
		}
	}
	for _, c := range []Caller{b, s} {
		got, err := Resolve(t.Context(), c, &sdk.ResolveRequest{Target: sdk.Target{Slice: "acme_main"}})
		if err != nil || got.Address != "echo://acme_main" {
			t.Errorf("resolve: got %+v, %v; want echo://acme_main", got, err)
		}
		_, err = Clone(t.Context(), c, &sdk.CloneRequest{Target: sdk.Target{Slice: "b"}, Source: "a"})
		var se *sdk.Error
		if !errors.As(err, &se) || se.Code != sdk.CodeUnsupported {
			t.Errorf("clone: got %v; want an *sdk.Error with code unsupported", err)
		}
	}
}

func TestOneShotTimeout(t *testing.T) {
	b := fake(t, "hang")
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := b.CallRaw(ctx, sdk.CallResolve, []byte(`{"protocol":1,"slice":"x"}`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after ") {
		t.Fatalf("got %v; want a timeout", err)
	}
}

func TestSessionTimeoutCloses(t *testing.T) {
	b := fake(t, "hang")
	s, err := b.StartRPC(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err = s.CallRaw(ctx, sdk.CallResolve, []byte(`{"protocol":1,"slice":"x"}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want a deadline error", err)
	}
	_, err = s.CallRaw(t.Context(), sdk.CallDescribe, []byte(`{}`))
	if !errors.Is(err, ErrSessionClosed) {
		t.Fatalf("after a timeout: got %v; want ErrSessionClosed", err)
	}
}

func TestStartMissing(t *testing.T) {
	b := &Binary{Path: "/nonexistent/binky-adapter-nope"}
	_, err := b.CallRaw(t.Context(), sdk.CallDescribe, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "binky-adapter-nope describe") {
		t.Fatalf("got %v; want a start error naming the binary", err)
	}
	if _, err := b.StartRPC(t.Context()); err == nil {
		t.Fatal("StartRPC of a missing binary: got no error")
	}
}

// TestUnknownCallIsInvalid: a one-shot adapter that exits 2 with no reply
// (its usage error: a call of a newer protocol it does not know, such as
// size) answers code invalid, which the host and the conformance kit read
// as "no such call", not a broken adapter.
func TestUnknownCallIsInvalid(t *testing.T) {
	b := fake(t, "usage")
	_, err := b.CallRaw(context.Background(), "size", []byte(`{"protocol":1}`))
	if err == nil || sdk.CodeOf(err) != sdk.CodeInvalid || !strings.Contains(err.Error(), `does not know the call "size"`) {
		t.Fatalf("an unknown call: %v (code %s); want code invalid saying the adapter does not know it", err, sdk.CodeOf(err))
	}
}
