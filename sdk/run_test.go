package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// helperEnv marks the test binary re-executed as a fake adapter.
const helperEnv = "BINKY_SDK_TEST_HELPER"

// TestHelperProcess is not a test: it is the fake adapter the other tests
// start as a child process (go-plugin's pattern). Its argv after "--" is
// the adapter's argv.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the fake adapter runs only as a child process of the other tests")
	}
	args := []string{}
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	os.Args = append([]string{"binky-adapter-fake"}, args...)
	os.Exit(runMain(fakeAdapter{}))
}

// helperCmd runs the fake adapter with argv args.
func helperCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	return cmd
}

// fakeAdapter behaves as its request's config "do" says.
type fakeAdapter struct{}

func (fakeAdapter) Describe(context.Context, *DescribeRequest) (*DescribeResponse, error) {
	return &DescribeResponse{Name: "fake", Aliases: []string{"phony"}, Version: "test"}, nil
}

func (fakeAdapter) Provision(ctx context.Context, req *ProvisionRequest) (*ProvisionResponse, error) {
	switch req.Config["do"] {
	case "panic":
		panic("boom")
	case "print":
		fmt.Println("stray stdout from the adapter")
		fmt.Fprintln(os.Stderr, "a diagnostic")
	case "block":
		fmt.Fprintln(os.Stderr, "ready")
		<-ctx.Done()
		return nil, fmt.Errorf("provision %q: %w", req.Slice, ctx.Err())
	case "refuse":
		return nil, Errorf(CodeAuth, "password rejected")
	}
	return &ProvisionResponse{}, nil
}

func (fakeAdapter) Resolve(_ context.Context, req *ResolveRequest) (*ResolveResponse, error) {
	return &ResolveResponse{Address: "fake://" + req.Slice, Values: map[string]string{"slice": req.Slice}}, nil
}

func (fakeAdapter) Clone(context.Context, *CloneRequest) (*CloneResponse, error) {
	return nil, Errorf(CodeUnsupported, "fake cannot clone")
}

func (fakeAdapter) Destroy(context.Context, *DestroyRequest) (*DestroyResponse, error) {
	return &DestroyResponse{}, nil
}

// oneShot runs the fake adapter once as a child process.
func oneShotChild(t *testing.T, stdin []byte, args ...string) (exit int, stdout, stderr []byte) {
	t.Helper()
	cmd := helperCmd(args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	default:
		t.Fatalf("run fake adapter %v: %v", args, err)
	}
	return exit, out.Bytes(), errOut.Bytes()
}

// oneObject checks that stdout is exactly one JSON object and a newline,
// and returns the object without the newline.
func oneObject(t *testing.T, stdout []byte) []byte {
	t.Helper()
	obj, ok := bytes.CutSuffix(stdout, []byte("\n"))
	if !ok || bytes.ContainsRune(obj, '\n') || !json.Valid(obj) || !bytes.HasPrefix(obj, []byte("{")) {
		t.Fatalf("stdout is not exactly one JSON object and a newline: %q", stdout)
	}
	return obj
}

// padded returns a describe request of exactly n bytes.
func padded(n int) []byte {
	b := []byte(`{"protocol":1}`)
	return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
}

func TestRunOneShot(t *testing.T) {
	t.Parallel()
	tooBig := []byte(`{"protocol":1,"slice":"a","config":{"pad":"` + strings.Repeat("x", MaxMessage) + `"}}`)
	tests := []struct {
		name     string
		call     string
		stdin    string
		wantExit int
		want     string   // exact reply, when set
		wantCode Code     // else: the code,
		wantIn   []string // and substrings of the error
	}{
		{name: "describe", call: "describe", stdin: `{"protocol":1}`,
			want: `{"aliases":["phony"],"clone":false,"name":"fake","ok":true,"protocol":1,"rpc":true,"version":"test"}`},
		{name: "describe without protocol", call: "describe", stdin: `{}`,
			want: `{"aliases":["phony"],"clone":false,"name":"fake","ok":true,"protocol":1,"rpc":true,"version":"test"}`},
		{name: "provision", call: "provision", stdin: `{"protocol":1,"slice":"p_main"}`, want: `{"ok":true}`},
		{name: "resolve", call: "resolve", stdin: `{"protocol":1,"slice":"p_main","config":{}}`,
			want: `{"address":"fake://p_main","ok":true,"values":{"slice":"p_main"}}`},
		{name: "destroy", call: "destroy", stdin: `{"protocol":1,"slice":"p_main"}`, want: `{"ok":true}`},
		{name: "clone unsupported", call: "clone", stdin: `{"protocol":1,"slice":"b","source":"a"}`, wantExit: 1,
			want: `{"ok":false,"error":"fake cannot clone","code":"unsupported"}`},
		{name: "adapter error keeps its code", call: "provision", stdin: `{"protocol":1,"slice":"p","config":{"do":"refuse"}}`, wantExit: 1,
			want: `{"ok":false,"error":"password rejected","code":"auth"}`},
		{name: "panic becomes internal", call: "provision", stdin: `{"protocol":1,"slice":"p","config":{"do":"panic"}}`, wantExit: 1,
			wantCode: CodeInternal, wantIn: []string{"panicked during provision", "boom"}},
		{name: "protocol too new", call: "provision", stdin: `{"protocol":2,"slice":"p"}`, wantExit: 1,
			wantCode: CodeInvalid, wantIn: []string{"protocol 2", "protocol 1"}},
		{name: "not JSON", call: "resolve", stdin: `hello`, wantExit: 1, wantCode: CodeInvalid, wantIn: []string{"not a JSON object"}},
		{name: "empty stdin", call: "destroy", stdin: ``, wantExit: 1, wantCode: CodeInvalid},
		{name: "two objects", call: "provision", stdin: `{"protocol":1,"slice":"p"}{}`, wantExit: 1, wantCode: CodeInvalid},
		{name: "oversize stdin", call: "provision", stdin: string(tooBig), wantExit: 1,
			wantCode: CodeInvalid, wantIn: []string{"larger than 1048576 bytes"}},
		{name: "exactly the limit", call: "describe", stdin: string(padded(MaxMessage)),
			want: `{"aliases":["phony"],"clone":false,"name":"fake","ok":true,"protocol":1,"rpc":true,"version":"test"}`},
		{name: "stray print goes to stderr", call: "provision", stdin: `{"protocol":1,"slice":"p","config":{"do":"print"}}`, want: `{"ok":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exit, stdout, stderr := oneShotChild(t, []byte(tt.stdin), tt.call)
			if exit != tt.wantExit {
				t.Errorf("exit status: got %d; want %d (stderr: %s)", exit, tt.wantExit, stderr)
			}
			reply := oneObject(t, stdout)
			if tt.want != "" {
				if string(reply) != tt.want {
					t.Errorf("reply: got %s; want %s", reply, tt.want)
				}
				return
			}
			err := DecodeReply(reply, nil)
			if CodeOf(err) != tt.wantCode || err == nil {
				t.Fatalf("reply %s: got error %v; want code %s", reply, err, tt.wantCode)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error: got %q; want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestRunStrayPrintLandsOnStderr(t *testing.T) {
	t.Parallel()
	_, _, stderr := oneShotChild(t, []byte(`{"protocol":1,"slice":"p","config":{"do":"print"}}`), "provision")
	for _, want := range []string{"stray stdout from the adapter", "a diagnostic"} {
		if !bytes.Contains(stderr, []byte(want)) {
			t.Errorf("stderr: got %q; want it to contain %q", stderr, want)
		}
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		cookie string
		wantIn string
	}{
		{name: "no arguments", args: nil, wantIn: "usage: binky-adapter-fake describe|provision"},
		{name: "help", args: []string{"--help"}, wantIn: "usage:"},
		{name: "unknown call", args: []string{"create"}, wantIn: `unknown call "create"`},
		{name: "extra argument", args: []string{"describe", "now"}, wantIn: "describe takes no arguments"},
		{name: "wrong cookie", args: nil, cookie: "stale", wantIn: "does not hold the cookie of protocol 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := helperCmd(tt.args...)
			if tt.cookie != "" {
				cmd.Env = append(cmd.Env, Handshake.MagicCookieKey+"="+tt.cookie)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(`{"protocol":1}`), &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit: got %v; want exit status 2", err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: got %q; want nothing", stdout.Bytes())
			}
			if !strings.Contains(stderr.String(), tt.wantIn) {
				t.Errorf("stderr: got %q; want it to contain %q", stderr.String(), tt.wantIn)
			}
		})
	}
}

// TestRunRPCMatchesOneShot serves the fake adapter through a real go-plugin
// client and checks each reply is byte-identical to the one-shot reply.
func TestRunRPCMatchesOneShot(t *testing.T) {
	t.Parallel()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginSet(nil),
		Cmd:              helperCmd(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "host", Output: tWriter{t}, Level: hclog.Warn}),
	})
	defer client.Kill()
	conn, err := client.Client()
	if err != nil {
		t.Fatalf("start fake adapter over go-plugin: %v", err)
	}
	raw, err := conn.Dispense(PluginName)
	if err != nil {
		t.Fatalf("dispense %q: %v", PluginName, err)
	}
	adapter, ok := raw.(*RPCClient)
	if !ok {
		t.Fatalf("dispensed %T; want *RPCClient", raw)
	}

	tests := []struct {
		call, request string
	}{
		{"describe", `{"protocol":1}`},
		{"provision", `{"protocol":1,"slice":"p_main","config":{"k":"v"}}`},
		{"provision", `{"protocol":1,"slice":"p","config":{"do":"refuse"}}`},
		{"resolve", `{"protocol":1,"slice":"p_main"}`},
		{"clone", `{"protocol":1,"slice":"b","source":"a"}`},
		{"destroy", `{"protocol":1,"slice":"p_main"}`},
		{"provision", `{"protocol":2,"slice":"p"}`},
		{"resolve", `not json`},
		{"resolve", `{"protocol":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.call+" "+tt.request, func(t *testing.T) {
			got, err := adapter.Call(context.Background(), tt.call, []byte(tt.request))
			if err != nil {
				t.Fatalf("rpc %s: %v", tt.call, err)
			}
			_, stdout, _ := oneShotChild(t, []byte(tt.request), tt.call)
			want := oneObject(t, stdout)
			if !bytes.Equal(got, want) {
				t.Errorf("rpc reply: got %s; want the one-shot reply %s", got, want)
			}
		})
	}

	// A panic's reply carries a stack, which differs between tiers; the code
	// and the message's first line must not.
	got, err := adapter.Call(context.Background(), "provision", []byte(`{"protocol":1,"slice":"p","config":{"do":"panic"}}`))
	if err != nil {
		t.Fatalf("rpc provision: %v", err)
	}
	rerr := DecodeReply(got, nil)
	if CodeOf(rerr) != CodeInternal || rerr == nil || !strings.Contains(rerr.Error(), "panicked during provision: boom") {
		t.Errorf("rpc panic reply: got %s; want code internal naming the panic", got)
	}

	client.Kill()
	if !client.Exited() {
		t.Errorf("fake adapter still running after Kill")
	}
}

// tWriter sends a child's log lines to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// FuzzRunOneShot feeds arbitrary requests to every call: stdout must hold
// exactly one JSON object, and the exit status must say whether it is ok.
func FuzzRunOneShot(f *testing.F) {
	f.Add("describe", []byte(`{"protocol":1}`))
	f.Add("provision", []byte(`{"protocol":1,"slice":"p","config":{"do":"panic"}}`))
	f.Add("clone", []byte(`{"protocol":1,"slice":"b","source":"a"}`))
	f.Add("resolve", []byte(`{"protocol":9,"slice":"p"}`))
	f.Add("destroy", []byte(`[1,2]`))
	f.Add("bogus", []byte(`{}`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a "block" request must not hang the fuzzer
	f.Fuzz(func(t *testing.T, call string, stdin []byte) {
		var stdout, stderr bytes.Buffer
		exit := run(ctx, fakeAdapter{}, []string{"fuzz", call}, bytes.NewReader(stdin), &stdout, &stderr, func(string) string { return "" })
		if !isCall(call) {
			if exit != 2 || stdout.Len() != 0 {
				t.Fatalf("call %q: got exit %d and stdout %q; want exit 2 and no stdout", call, exit, stdout.Bytes())
			}
			return
		}
		reply := oneObject(t, stdout.Bytes())
		wantExit := 0
		if DecodeReply(reply, nil) != nil {
			wantExit = 1
		}
		if exit != wantExit {
			t.Fatalf("reply %s: got exit %d; want %d", reply, exit, wantExit)
		}
	})
}

// BenchmarkRunOneShot is one resolve through the one-shot tier: a fresh
// process (the test binary) per call.
func BenchmarkRunOneShot(b *testing.B) {
	req := []byte(`{"protocol":1,"slice":"p_main"}`)
	for b.Loop() {
		cmd := helperCmd("resolve")
		cmd.Stdin = bytes.NewReader(req)
		if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte(`"ok":true`)) {
			b.Fatalf("resolve: %v %s", err, out)
		}
	}
}

// BenchmarkRunRPC is one resolve through a warm go-plugin client.
func BenchmarkRunRPC(b *testing.B) {
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginSet(nil),
		Cmd:              helperCmd(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Logger:           hclog.NewNullLogger(),
	})
	defer client.Kill()
	conn, err := client.Client()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := conn.Dispense(PluginName)
	if err != nil {
		b.Fatal(err)
	}
	adapter := raw.(*RPCClient)
	req := []byte(`{"protocol":1,"slice":"p_main"}`)
	for b.Loop() {
		if out, err := adapter.Call(context.Background(), "resolve", req); err != nil || !bytes.Contains(out, []byte(`"ok":true`)) {
			b.Fatalf("resolve: %v %s", err, out)
		}
	}
}
