package adapter

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/internal/testbin"
	"github.com/binkyhq/binky/sdk"
)

// The test binary doubles as every fake adapter: installed (symlinked) as
// binky-adapter-fake-<mode>, it behaves as <mode> says instead of running
// tests. Modes ending in "-rpc" say rpc:true and serve go-plugin RPC.
func TestMain(m *testing.M) {
	if mode, ok := strings.CutPrefix(filepath.Base(os.Args[0]), Prefix+"fake-"); ok {
		os.Exit(runFake(strings.TrimSuffix(mode, ".exe")))
	}
	os.Exit(m.Run())
}

// fakeAdapter is the well-behaved core every mode starts from.
type fakeAdapter struct {
	mode string
	dir  string
	// stderr is the process's own fd 2: go-plugin swaps os.Stderr for a
	// best-effort stream in the RPC tier.
	stderr *os.File
}

func (f *fakeAdapter) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	appendLine(filepath.Join(f.dir, "fake-"+f.mode+".describes"), "describe")
	switch {
	case strings.HasPrefix(f.mode, "hangdescribe"):
		time.Sleep(time.Hour)
	case strings.HasPrefix(f.mode, "meet"):
		// Answers only once every meet-* adapter in its directory is being
		// described at the same time (or gives up after a minute).
		_ = os.WriteFile(filepath.Join(f.dir, f.mode+".here"), nil, 0o644)
		for range 600 {
			all, _ := filepath.Glob(filepath.Join(f.dir, Prefix+"fake-meet*"))
			here, _ := filepath.Glob(filepath.Join(f.dir, "meet*.here"))
			if len(here) >= len(all) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	d := &sdk.DescribeResponse{Name: "fake", Version: f.mode, Clone: true, RPC: strings.HasSuffix(f.mode, "-rpc")}
	if strings.HasPrefix(f.mode, "alias") {
		d.Aliases = []string{"fakealias", "fake-ok"}
	}
	return d, nil
}

func (f *fakeAdapter) Provision(context.Context, *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	return &sdk.ProvisionResponse{}, nil
}

func (f *fakeAdapter) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	if strings.HasPrefix(f.mode, "hang") {
		writePids(f.dir)
		time.Sleep(time.Hour)
	}
	if strings.HasPrefix(f.mode, "stderr") {
		fmt.Fprintln(f.stderr, "connecting with password hunter2")
	}
	values := map[string]string{
		"adapter":  req.Adapter,
		"data_dir": req.DataDir,
		"env":      strings.Join(envNames(), ","),
		"pid":      fmt.Sprint(os.Getpid()),
	}
	return &sdk.ResolveResponse{Address: "fake://" + req.Slice, Values: values}, nil
}

func (f *fakeAdapter) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	if req.Source == "missing" {
		return nil, sdk.Errorf(sdk.CodeConflict, "source slice %q does not exist", req.Source)
	}
	return &sdk.CloneResponse{Method: "fake"}, nil
}

func (f *fakeAdapter) Destroy(context.Context, *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	return &sdk.DestroyResponse{}, nil
}

// runFake is the fake adapter's main. Modes ending in -rpc are built on
// sdk.Run, as a real adapter is; the others answer one-shot calls by hand
// (sdk.Run always offers RPC) so that they can misbehave.
func runFake(mode string) int {
	f := &fakeAdapter{mode: mode, dir: filepath.Dir(os.Args[0]), stderr: os.Stderr}
	if len(os.Args) == 2 && os.Args[1] == "sleep" { // a child some modes leave behind
		time.Sleep(5 * time.Minute)
		return 0
	}
	if strings.HasSuffix(mode, "-rpc") {
		if strings.HasPrefix(mode, "noise") && len(os.Args) < 2 {
			fmt.Println("hello from adapter")
		}
		sdk.Run(f)
		return 0
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: binky-adapter-fake-* <call>")
		return 2
	}
	call := os.Args[1]
	body, _ := io.ReadAll(io.LimitReader(os.Stdin, sdk.MaxMessage+1))
	if call != sdk.CallDescribe {
		switch {
		case mode == "garbage":
			fmt.Println("hello world")
			return 0
		case mode == "exit1":
			fmt.Println("boom: cannot connect")
			return 1
		case mode == "empty":
			return 0
		case mode == "two":
			fmt.Print(`{"ok":true}{"ok":true}`)
			return 0
		case mode == "okfalse":
			fmt.Print(`{"ok":false,"error":"slice is busy","code":"conflict"}`)
			return 0
		case mode == "oktrue1":
			fmt.Print(`{"ok":true}`)
			return 1
		case mode == "big":
			fmt.Print(`{"ok":true,"address":"` + strings.Repeat("a", 10<<20) + `"}`)
			return 0
		case mode == "child":
			// A child that keeps our stdout open and outlives us.
			c := exec.Command(os.Args[0], "sleep")
			c.Stdout = os.Stdout
			if err := c.Start(); err == nil {
				_ = os.WriteFile(filepath.Join(f.dir, "child.pid"), []byte(fmt.Sprint(c.Process.Pid)), 0o644)
			}
		}
	}
	if mode == "baddescribe" {
		fmt.Println("not a describe reply")
		return 0
	}
	reply := sdk.Dispatch(context.Background(), f, call, body)
	_, _ = os.Stdout.Write(reply)
	if sdk.DecodeReply(reply, nil) == nil {
		return 0
	}
	return 1
}

// writePids records the adapter's pid and starts a grandchild in its group,
// both for the test to check after a timeout.
func writePids(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "adapter.pid"), []byte(fmt.Sprint(os.Getpid())), 0o644)
	c := exec.Command(os.Args[0], "sleep")
	if err := c.Start(); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "child.pid"), []byte(fmt.Sprint(c.Process.Pid)), 0o644)
	}
}

func envNames() []string {
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, line)
}

// installFake puts the test binary into dir as binky-adapter-fake-<mode>.
func installFake(t testing.TB, dir, mode string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake adapters rely on Unix process groups and symlinks")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, Prefix+"fake-"+mode)
	if err := os.Symlink(self, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// copyFake installs a real copy (its own size and mtime) of the test binary.
func copyFake(t testing.TB, dir, mode string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake adapters rely on Unix process groups and symlinks")
	}
	p := filepath.Join(dir, Prefix+"fake-"+mode)
	testbin.CopySelf(t, p)
	return p
}

// stderrLog collects what the host hands to OnStderr.
type stderrLog struct {
	ch chan string
}

func (s *stderrLog) add(adapter, call, text string) {
	select {
	case s.ch <- adapter + " " + call + ": " + text:
	default:
	}
}

// all drains what was collected so far.
func (s *stderrLog) all() string {
	var b strings.Builder
	for {
		select {
		case l := <-s.ch:
			b.WriteString(l)
		default:
			return b.String()
		}
	}
}

// testHost is a Host with its own BINKY_HOME and PATH = dirs.
func testHost(t testing.TB, opts Options, dirs ...string) (*Host, *stderrLog) {
	t.Helper()
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	opts.PathEnv = strings.Join(dirs, string(os.PathListSeparator))
	if opts.SystemDirs == nil {
		opts.SystemDirs = []string{} // never the machine's packaged adapters
	}
	if opts.PathEnv == "" {
		opts.PathEnv = t.TempDir()
	}
	log := &stderrLog{ch: make(chan string, 64)}
	opts.OnStderr = log.add
	return New(opts), log
}
