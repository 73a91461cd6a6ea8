package adapter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

func resolveReq(slice string) *sdk.ResolveRequest {
	return &sdk.ResolveRequest{Target: sdk.Target{Slice: slice, Project: "acme"}}
}

// TestCallFailures: every way an adapter can misbehave on stdout ends in a
// bounded error naming the binary, the call and what was seen.
func TestCallFailures(t *testing.T) {
	tests := []struct {
		mode string
		want []string // substrings of the error
		code sdk.Code // when the error is an adapter reply
	}{
		{mode: "garbage", want: []string{"binky-adapter-fake-garbage resolve", "not a JSON object", `"hello world\n"`}},
		{mode: "exit1", want: []string{"binky-adapter-fake-exit1 resolve", "exit status 1", `"boom: cannot connect\n"`}},
		{mode: "empty", want: []string{"binky-adapter-fake-empty resolve", "reply is empty"}},
		{mode: "two", want: []string{"binky-adapter-fake-two resolve", "more than one JSON value", `{\"ok\":true}{\"ok\":true}`}},
		{mode: "big", want: []string{"binky-adapter-fake-big resolve", "1 MiB", `"{\"ok\":true,\"address\":\"aaaa`}},
		{mode: "oktrue1", want: []string{"replied ok:true but exit status 1"}},
		{mode: "okfalse", want: []string{"binky-adapter-fake-okfalse resolve", "slice is busy"}, code: sdk.CodeConflict},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			installFake(t, dir, tt.mode)
			h, _ := testHost(t, Options{}, dir)
			c, err := h.Open(t.Context(), "fake-"+tt.mode)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer c.Close()
			_, err = c.Resolve(t.Context(), resolveReq("acme_main"))
			if err == nil {
				t.Fatalf("resolve: got no error; want one")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want it to contain %q", err, w)
				}
			}
			if n := len(err.Error()); n > 1024 {
				t.Errorf("error is %d bytes; want at most 1024", n)
			}
			var se *sdk.Error
			if got := errors.As(err, &se); got != (tt.code != "") {
				t.Fatalf("errors.As(*sdk.Error) = %v; want %v (err %v)", got, tt.code != "", err)
			}
			if tt.code != "" && se.Code != tt.code {
				t.Errorf("code: got %v; want %v", se.Code, tt.code)
			}
		})
	}
}

// TestNonZeroExitWithReply: exit 1 with a valid ok:false reply is the
// adapter's error, with its code.
func TestNonZeroExitWithReply(t *testing.T) {
	dir := t.TempDir()
	installFake(t, dir, "ok")
	h, _ := testHost(t, Options{}, dir)
	c, err := h.Open(t.Context(), "fake-ok")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Clone(t.Context(), &sdk.CloneRequest{Target: sdk.Target{Slice: "acme_b"}, Source: "missing"})
	if got := sdk.CodeOf(err); got != sdk.CodeConflict {
		t.Fatalf("code: got %v; want %v (err %v)", got, sdk.CodeConflict, err)
	}
}

// pidOf reads a pid file a fake wrote.
func pidOf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}

// alive reports whether pid is a live process: present in /proc and not a
// zombie. A zombie of ours would mean we failed to reap.
func procState(pid int) (exists bool, state byte) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return true, '?'
	}
	return true, s[i+2]
}

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
}

// waitDead polls until pid is no longer running (the kernel delivers
// SIGKILL asynchronously); this bounds a wait, it asserts no timing.
func waitDead(pid int) (exists bool, state byte) {
	for range 200 {
		exists, state = procState(pid)
		if !exists || state == 'Z' || state == 'X' {
			return exists, state
		}
		time.Sleep(10 * time.Millisecond)
	}
	return exists, state
}

func TestTimeoutKillsGroup(t *testing.T) {
	needProc(t)
	for _, mode := range []string{"hang", "hang-rpc"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			installFake(t, dir, mode)
			h, _ := testHost(t, Options{}, dir)
			c, err := h.Open(t.Context(), "fake-"+mode, WithTimeout(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			_, err = c.Resolve(t.Context(), resolveReq("acme_main"))
			elapsed := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v; want a deadline error", err)
			}
			for _, w := range []string{"binky-adapter-fake-" + mode + " resolve", "process group was killed"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want it to contain %q", err, w)
				}
			}
			// The error names the time the call was given: the deadline
			// less what passed before the call began (sdk/client's
			// deadlineText), so "1.99s" on a busy machine, never more
			// than the 2s asked.
			if d, ok := timedOutAfter(err.Error()); !ok || d > 2*time.Second || d < time.Second {
				t.Errorf("error %q: want \"timed out after D\" with 1s <= D <= 2s", err)
			}
			// The call ends at its deadline, not before; the upper bound
			// only catches a hang.
			if elapsed < 2*time.Second || elapsed > 2*time.Second+30*time.Second {
				t.Errorf("the call returned after %s; want its 2s deadline (and no hang)", elapsed)
			}
			adapter := pidOf(t, filepath.Join(dir, "adapter.pid"))
			if exists, state := procState(adapter); exists {
				t.Errorf("adapter pid %d: still in /proc (state %c); want it killed and reaped", adapter, state)
			}
			child := pidOf(t, filepath.Join(dir, "child.pid"))
			if exists, state := waitDead(child); exists && state != 'Z' && state != 'X' {
				t.Errorf("child pid %d in the adapter's group: state %c; want it killed", child, state)
			}
			if mode == "hang-rpc" {
				_, err := c.Resolve(t.Context(), resolveReq("acme_main"))
				if !errors.Is(err, client.ErrSessionClosed) {
					t.Errorf("call after a timeout: got %v; want ErrSessionClosed", err)
				}
			}
		})
	}
}

// timedOutAfter reads the D of "timed out after D" in an error text.
func timedOutAfter(text string) (time.Duration, bool) {
	_, rest, ok := strings.Cut(text, "timed out after ")
	if !ok {
		return 0, false
	}
	word, _, _ := strings.Cut(rest, ";")
	d, err := time.ParseDuration(strings.TrimSpace(word))
	return d, err == nil
}

// TestChildLeftBehind: a child that outlives the adapter and holds its
// stdout neither blocks the call nor survives it.
func TestChildLeftBehind(t *testing.T) {
	needProc(t)
	dir := t.TempDir()
	installFake(t, dir, "child")
	h, _ := testHost(t, Options{}, dir)
	c, err := h.Open(t.Context(), "fake-child")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Resolve(t.Context(), resolveReq("acme_main"))
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if r.Address != "fake://acme_main" {
		t.Errorf("address: got %q; want %q", r.Address, "fake://acme_main")
	}
	child := pidOf(t, filepath.Join(dir, "child.pid"))
	if exists, state := waitDead(child); exists && state != 'Z' && state != 'X' {
		t.Errorf("child pid %d: state %c; want it killed after the call", child, state)
	}
}

func TestRPCNoiseBeforeHandshake(t *testing.T) {
	dir := t.TempDir()
	installFake(t, dir, "noise-rpc")
	h, _ := testHost(t, Options{}, dir)
	_, err := h.Open(t.Context(), "fake-noise-rpc")
	if err == nil {
		t.Fatal("open: got no error; want one")
	}
	for _, w := range []string{"binky-adapter-fake-noise-rpc rpc", "before the go-plugin handshake", `"hello from adapter"`, OneShotEnv} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want it to contain %q", err, w)
		}
	}
}

// TestTiers: the tier follows describe, the environment switch forces
// one-shot, and both give the same answers.
func TestTiers(t *testing.T) {
	tests := []struct {
		mode    string
		oneShot string
		want    string
	}{
		{mode: "ok", want: TierOneShot},
		{mode: "ok-rpc", want: TierRPC},
		{mode: "ok-rpc", oneShot: "1", want: TierOneShot},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.want, func(t *testing.T) {
			t.Setenv(OneShotEnv, tt.oneShot)
			dir := t.TempDir()
			installFake(t, dir, tt.mode)
			h, _ := testHost(t, Options{}, dir)
			var pids []string
			err := h.Batch(t.Context(), "fake-"+tt.mode, func(c *Conn) error {
				if got := c.Tier(); got != tt.want {
					t.Errorf("tier: got %v; want %v", got, tt.want)
				}
				if _, err := c.Provision(t.Context(), &sdk.ProvisionRequest{Target: sdk.Target{Slice: "acme_main"}}); err != nil {
					return err
				}
				for range 2 {
					r, err := c.Resolve(t.Context(), resolveReq("acme_main"))
					if err != nil {
						return err
					}
					if r.Address != "fake://acme_main" {
						t.Errorf("address: got %q; want %q", r.Address, "fake://acme_main")
					}
					pids = append(pids, r.Values["pid"])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// RPC keeps one process for the batch; one-shot starts one per call.
			if same := pids[0] == pids[1]; same != (tt.want == TierRPC) {
				t.Errorf("pids %v: same process = %v; want %v", pids, same, tt.want == TierRPC)
			}
		})
	}
}

// TestMinimalEnv: only PATH, HOME, TMPDIR and locale reach the adapter.
func TestMinimalEnv(t *testing.T) {
	t.Setenv("BINKY_TEST_SECRET", "s3cret")
	t.Setenv("LC_TIME", "C")
	for _, mode := range []string{"ok", "ok-rpc"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			installFake(t, dir, mode)
			h, _ := testHost(t, Options{}, dir)
			c, err := h.Open(t.Context(), "fake-"+mode)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r, err := c.Resolve(t.Context(), resolveReq("acme_main"))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range strings.Split(r.Values["env"], ",") {
				switch {
				case name == "PATH", name == "HOME", name == "TMPDIR", name == "LANG", name == "LANGUAGE", strings.HasPrefix(name, "LC_"):
				case mode == "ok-rpc" && (strings.HasPrefix(name, "PLUGIN_") || name == sdk.Handshake.MagicCookieKey || name == sdk.HostPidEnv):
				default:
					t.Errorf("adapter environment has %s; want only PATH, HOME, TMPDIR and locale", name)
				}
			}
			if !strings.Contains(","+r.Values["env"]+",", ",LC_TIME,") {
				t.Errorf("adapter environment %q: want LC_TIME passed on", r.Values["env"])
			}
		})
	}
}

// TestStderrRedacted: the adapter's stderr reaches OnStderr after Redact.
func TestStderrRedacted(t *testing.T) {
	for _, mode := range []string{"stderr", "stderr-rpc"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			installFake(t, dir, mode)
			redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
			h, log := testHost(t, Options{Redact: redact}, dir)
			c, err := h.Open(t.Context(), "fake-"+mode)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Resolve(t.Context(), resolveReq("acme_main")); err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			got := log.all()
			if !strings.Contains(got, "password ***") {
				t.Errorf("stderr handed on: %q; want it to contain %q", got, "password ***")
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("stderr handed on: %q; want the secret redacted", got)
			}
			if !strings.Contains(got, "fake-"+mode+" ") {
				t.Errorf("stderr handed on: %q; want it attributed to the adapter", got)
			}
		})
	}
}

// TestHeaderAndDataDir: the host fills protocol, the name asked for, and
// the adapter's data directory under BINKY_HOME.
func TestHeaderAndDataDir(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	installFake(t, dir, "alias")
	h, _ := testHost(t, Options{Home: home}, dir)
	c, err := h.Open(t.Context(), "fakealias")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Resolve(t.Context(), resolveReq("acme_main"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Values["adapter"]; got != "fakealias" {
		t.Errorf("request adapter: got %q; want %q", got, "fakealias")
	}
	wantDir := filepath.Join(home, "data", "fake-alias")
	if got := r.Values["data_dir"]; got != wantDir {
		t.Errorf("request data_dir: got %q; want %q", got, wantDir)
	}
	if st, err := os.Stat(wantDir); err != nil || !st.IsDir() {
		t.Errorf("data dir %s: %v; want it created", wantDir, err)
	}
}
