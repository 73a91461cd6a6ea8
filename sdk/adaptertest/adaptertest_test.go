package adaptertest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
	"github.com/hashicorp/go-plugin"
)

// fakeEnv picks the fake adapter's behaviour when the test binary runs as
// one (Options.Env carries it).
const fakeEnv = "BINKY_CONFORMANCE_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	os.Exit(m.Run())
}

// dirStore keeps a slice as a directory under data_dir; modes break one
// rule each.
type dirStore struct {
	mode string
	rpc  bool // serving the RPC tier right now
}

func (d dirStore) path(t sdk.Target) string { return filepath.Join(t.DataDir, t.Slice) }

// claimPath keeps a slice's owner claim beside its directory.
func (d dirStore) claimPath(t sdk.Target, slice string) string {
	return filepath.Join(t.DataDir, slice+".owner")
}

// checkClaim refuses another owner's slice (mode claimliar says it claims
// and checks nothing; noclaims does not claim).
func (d dirStore) checkClaim(t sdk.Target, slice string) error {
	if d.mode == "claimliar" || d.mode == "noclaims" {
		return nil
	}
	b, _ := os.ReadFile(d.claimPath(t, slice))
	return t.CheckClaim("slice "+slice, string(b))
}

// keepClaim checks, then records t's claim (adopting an unclaimed slice).
func (d dirStore) keepClaim(t sdk.Target) error {
	if err := d.checkClaim(t, t.Slice); err != nil {
		return err
	}
	if c := t.Claim(); c != "" && d.mode != "claimliar" && d.mode != "noclaims" {
		return os.WriteFile(d.claimPath(t, t.Slice), []byte(c), 0o644)
	}
	return nil
}

// Size is the optional size call: how many entries the slice's directory
// holds, 0 when it is not there (mode sizeliar: 1 for a slice never made).
func (d dirStore) Size(_ context.Context, r *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	ents, err := os.ReadDir(d.path(r.Target))
	if errors.Is(err, fs.ErrNotExist) {
		if d.mode == "sizeliar" {
			return &sdk.SizeResponse{Bytes: 1}, nil
		}
		return &sdk.SizeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &sdk.SizeResponse{Bytes: int64(len(ents))}, nil
}

func (d dirStore) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	resp := &sdk.DescribeResponse{Name: "dirstore", Aliases: []string{"folder"}, Clone: d.mode != "noclone", RPC: true, Claims: d.mode != "noclaims"}
	switch d.mode {
	case "badname":
		resp.Name = "Dir Store"
	case "cloneliar", "serverclone":
		resp.Clone = true
	}
	return resp, nil
}

func (d dirStore) Provision(_ context.Context, r *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	if d.mode == "strict" {
		if _, err := os.Stat(d.path(r.Target)); err == nil {
			return nil, sdk.Errorf(sdk.CodeConflict, "slice %q exists", r.Slice)
		}
	}
	if err := d.keepClaim(r.Target); err != nil {
		return nil, err
	}
	return &sdk.ProvisionResponse{}, os.MkdirAll(d.path(r.Target), 0o755)
}

func (d dirStore) Resolve(_ context.Context, r *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	if err := d.checkClaim(r.Target, r.Slice); err != nil {
		return nil, err
	}
	addr := "file://" + d.path(r.Target)
	if d.mode == "rpcdiffers" && d.rpc {
		addr += "/rpc"
	}
	res := &sdk.ResolveResponse{Address: addr, Values: map[string]string{"path": d.path(r.Target)}}
	switch d.mode {
	case "plainpassword":
		res.Values["password"] = "hunter22"
	case "ghostsecret":
		res.Secret = []string{"token"}
	default:
		res.SetSecret("password", "")
	}
	return res, nil
}

func (d dirStore) Clone(_ context.Context, r *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	switch d.mode {
	case "noclone", "serverclone":
		return nil, sdk.Errorf(sdk.CodeUnsupported, "dirstore cannot clone")
	case "cloneliar":
		return nil, sdk.Errorf(sdk.CodeInternal, "dirstore cannot clone")
	}
	src := filepath.Join(r.DataDir, r.Source)
	if _, err := os.Stat(src); err != nil {
		return nil, sdk.Errorf(sdk.CodeConflict, "source %q: %v", r.Source, err)
	}
	if err := d.checkClaim(r.Target, r.Source); err != nil {
		return nil, err
	}
	if err := d.keepClaim(r.Target); err != nil {
		return nil, err
	}
	return &sdk.CloneResponse{Method: "mkdir"}, os.MkdirAll(d.path(r.Target), 0o755)
}

func (d dirStore) Destroy(_ context.Context, r *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	if err := d.checkClaim(r.Target, r.Slice); err != nil {
		return nil, err
	}
	os.Remove(d.claimPath(r.Target, r.Slice))
	return &sdk.DestroyResponse{}, os.RemoveAll(d.path(r.Target))
}

func runFake(mode string) int {
	if len(os.Args) < 2 {
		plugin.Serve(&plugin.ServeConfig{HandshakeConfig: sdk.Handshake, Plugins: sdk.PluginSet(dirStore{mode: mode, rpc: true})})
		return 0
	}
	call := os.Args[1]
	body, _ := io.ReadAll(os.Stdin)
	var reply []byte
	switch {
	case mode == "lenient" && call == sdk.CallProvision:
		reply = []byte(`{"ok":true}`) // accepts anything
	default:
		reply = sdk.Dispatch(context.Background(), dirStore{mode: mode}, call, body)
	}
	_, _ = os.Stdout.Write(reply)
	if sdk.DecodeReply(reply, nil) != nil {
		return 1
	}
	return 0
}

func fakeOptions(t *testing.T, mode string) Options {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake adapter tests run on Unix")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Binary:  self,
		DataDir: t.TempDir(),
		Env:     append(client.MinimalEnv(os.Environ()), fakeEnv+"="+mode, "GORACE=atexit_sleep_ms=0"),
		Config:  map[string]any{"k": "v"},
	}
}

// TestConformingAdapter runs the whole suite through Test, as an adapter
// module would.
func TestConformingAdapter(t *testing.T) {
	for _, mode := range []string{"good", "noclone"} {
		t.Run(mode, func(t *testing.T) {
			Test(t, fakeOptions(t, mode))
		})
	}
}

// TestRunReportsEveryCheck: all checks, in order, and nothing left behind.
func TestRunReportsEveryCheck(t *testing.T) {
	opts := fakeOptions(t, "good")
	var got []string
	failed, err := Run(t.Context(), opts, func(r Result) {
		got = append(got, r.Check)
		if !r.OK {
			t.Errorf("%s: %s", r.Check, r.Detail)
		}
	})
	if err != nil || failed != 0 {
		t.Fatalf("Run: failed %d, err %v; want 0, nil", failed, err)
	}
	if want := "describe provision resolve clone size destroy claim invalid protocol rpc"; strings.Join(got, " ") != want {
		t.Errorf("checks: got %q; want %q", strings.Join(got, " "), want)
	}
	left, err := os.ReadDir(opts.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in the data dir: %s", e.Name())
	}
}

// TestBrokenAdapters: each way of breaking the contract fails its check.
func TestBrokenAdapters(t *testing.T) {
	tests := []struct {
		mode      string
		wantFail  string
		wantInMsg string
	}{
		{mode: "badname", wantFail: checkDescribe, wantInMsg: `name "Dir Store"`},
		{mode: "strict", wantFail: checkProvision, wantInMsg: "attempt 2 of 2"},
		{mode: "cloneliar", wantFail: checkClone, wantInMsg: "dirstore cannot clone"},
		{mode: "lenient", wantFail: checkInvalid, wantInMsg: "replied ok"},
		{mode: "sizeliar", wantFail: checkSize, wantInMsg: "a slice never made: 1 bytes; want 0"},
		{mode: "rpcdiffers", wantFail: checkRPC, wantInMsg: "want the same bytes"},
		{mode: "claimliar", wantFail: checkClaim, wantInMsg: "by another owner succeeded"},
		{mode: "plainpassword", wantFail: checkResolve, wantInMsg: `value "password" but did not list it in secret`},
		{mode: "ghostsecret", wantFail: checkResolve, wantInMsg: `lists "token" in secret but replied no such value`},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			results := map[string]Result{}
			failed, err := Run(t.Context(), fakeOptions(t, tt.mode), func(r Result) { results[r.Check] = r })
			if err != nil {
				t.Fatal(err)
			}
			r, ok := results[tt.wantFail]
			if !ok || r.OK {
				t.Fatalf("check %s: got %+v; want it failed", tt.wantFail, r)
			}
			if !strings.Contains(r.Detail, tt.wantInMsg) {
				t.Errorf("check %s detail %q: want it to contain %q", tt.wantFail, r.Detail, tt.wantInMsg)
			}
			if failed < 1 {
				t.Errorf("failed: got %d; want at least 1", failed)
			}
		})
	}
}

// TestCloneUnsupportedByServer: clone:true with a server that cannot clone
// (mongodb on FerretDB) answers unsupported, which passes and says so.
func TestCloneUnsupportedByServer(t *testing.T) {
	results := map[string]Result{}
	if _, err := Run(t.Context(), fakeOptions(t, "serverclone"), func(r Result) { results[r.Check] = r }); err != nil {
		t.Fatal(err)
	}
	r := results[checkClone]
	if !r.OK || !strings.Contains(r.Detail, "cannot clone") {
		t.Errorf("clone check = %+v; want it passed, saying the server cannot clone", r)
	}
}

// TestNoClaims: an adapter that does not claim slices passes the claim
// check, which says what that means.
func TestNoClaims(t *testing.T) {
	results := map[string]Result{}
	if _, err := Run(t.Context(), fakeOptions(t, "noclaims"), func(r Result) { results[r.Check] = r }); err != nil {
		t.Fatal(err)
	}
	if r := results[checkClaim]; !r.OK || !strings.Contains(r.Detail, "claims:false") {
		t.Errorf("claim check = %+v; want it passed, saying the adapter does not claim", r)
	}
}

func TestMissingBinary(t *testing.T) {
	var got []Result
	failed, err := Run(t.Context(), Options{Binary: filepath.Join(t.TempDir(), "binky-adapter-none")}, func(r Result) { got = append(got, r) })
	if err != nil {
		t.Fatal(err)
	}
	if failed != 1 || len(got) != 1 || got[0].Check != checkDescribe || got[0].OK {
		t.Fatalf("got failed %d, results %+v; want only a failed describe", failed, got)
	}
}

func TestRedact(t *testing.T) {
	if got, want := redact("postgres://u:secret@h/db"), "postgres://u:xxxxx@h/db"; got != want {
		t.Errorf("redact: got %q; want %q", got, want)
	}
	if got := redact("file:///tmp/x"); got != "file:///tmp/x" {
		t.Errorf("redact: got %q; want it unchanged", got)
	}
}
