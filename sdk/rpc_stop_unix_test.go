//go:build unix

package sdk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// hostEnv marks the test binary re-executed as a host that serves one RPC
// adapter and waits to be killed.
const hostEnv = "BINKY_SDK_TEST_HOST"

// stopWait bounds how long a test waits for an adapter to exit. Run checks
// its host every quarter second; the margin is for a loaded machine.
const stopWait = 15 * time.Second

// startRPC starts the fake adapter through a real go-plugin client, makes
// one call, and returns the client with the adapter's pid and socket path.
func startRPC(logger hclog.Logger) (*plugin.Client, int, string, error) {
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginSet(nil),
		Cmd:              helperCmd(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Logger:           logger,
	})
	conn, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, 0, "", fmt.Errorf("start fake adapter over go-plugin: %w", err)
	}
	raw, err := conn.Dispense(PluginName)
	if err != nil {
		client.Kill()
		return nil, 0, "", fmt.Errorf("dispense %q: %w", PluginName, err)
	}
	if _, err := raw.(*RPCClient).Call(context.Background(), CallDescribe, []byte(`{"protocol":1}`)); err != nil {
		client.Kill()
		return nil, 0, "", fmt.Errorf("describe over rpc: %w", err)
	}
	rc := client.ReattachConfig()
	if rc == nil || rc.Addr == nil || rc.Addr.Network() != "unix" {
		client.Kill()
		return nil, 0, "", fmt.Errorf("reattach config %+v: want a unix socket", rc)
	}
	return client, rc.Pid, rc.Addr.String(), nil
}

// TestHelperHost is not a test: it is the host TestRPCAdapterExitsWhenHostDies
// kills. It prints "<adapter pid> <socket path>" and waits.
func TestHelperHost(t *testing.T) {
	if os.Getenv(hostEnv) != "1" {
		t.Skip("the fake host runs only as a child process of the other tests")
	}
	_, pid, sock, err := startRPC(hclog.NewNullLogger())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d %s\n", pid, sock)
	time.Sleep(time.Hour)
	os.Exit(0)
}

// TestRPCAdapterExitsWhenHostDies SIGKILLs the host of an RPC adapter: the
// adapter must notice, exit and remove its go-plugin socket.
func TestRPCAdapterExitsWhenHostDies(t *testing.T) {
	t.Parallel()
	host := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	host.Env = append(os.Environ(), hostEnv+"=1")
	var hostErr strings.Builder
	host.Stderr = &hostErr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatalf("start fake host: %v", err)
	}
	t.Cleanup(func() { // a no-op once the test has killed and reaped it
		_ = host.Process.Kill()
		_ = host.Wait()
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("fake host printed no adapter (stderr: %s)", hostErr.String())
	}
	pidText, sock, _ := strings.Cut(sc.Text(), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || sock == "" {
		t.Fatalf("fake host printed %q; want \"<pid> <socket>\"", sc.Text())
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("adapter socket before the host dies: %v", err)
	}

	if err := host.Process.Kill(); err != nil {
		t.Fatalf("kill fake host: %v", err)
	}
	_ = host.Wait()

	waitGone(t, pid, sock, "its host was killed")
}

// TestRPCAdapterExitsOnSignal signals a serving RPC adapter: it must exit and
// remove its go-plugin socket, while its host still runs.
func TestRPCAdapterExitsOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			client, pid, sock, err := startRPC(hclog.New(&hclog.LoggerOptions{Name: "host", Output: tWriter{t}, Level: hclog.Warn}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if !client.Exited() {
					client.Kill()
				}
			}()
			if _, err := os.Stat(sock); err != nil {
				t.Fatalf("adapter socket before the signal: %v", err)
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatalf("signal adapter: %v", err)
			}
			waitGone(t, pid, sock, sig.String())
		})
	}
}

// waitGone waits up to stopWait for the adapter process pid to end and its
// socket file to disappear after what happened, and fails the test naming
// what remains.
func waitGone(t *testing.T, pid int, sock, what string) {
	t.Helper()
	deadline := time.Now().Add(stopWait)
	for {
		_, statErr := os.Stat(sock)
		gone := !alive(pid) && errors.Is(statErr, os.ErrNotExist)
		if gone {
			return
		}
		if time.Now().After(deadline) {
			if alive(pid) {
				t.Errorf("adapter pid %d still runs %s after %s", pid, stopWait, what)
			}
			if statErr == nil {
				t.Errorf("adapter socket %s still exists %s after %s", sock, stopWait, what)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive says whether pid runs. A zombie counts as dead: the process has
// exited and only waits for its new parent to reap it.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: kill(0) is all we know
	}
	// The state follows the command name, which is in parentheses.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// An adapter whose host died before the adapter could read its own parent
// pid (re-parented at once; found under a daemon kill storm) still sees
// that its host is gone: the host's pid comes in HostPidEnv.
func TestRPCAdapterExitsWhenHostDiedBeforeStart(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	cmd := helperCmd()
	cmd.Env = append(cmd.Env,
		Handshake.MagicCookieKey+"="+Handshake.MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS=1",
		HostPidEnv+"="+strconv.Itoa(dead.Process.Pid))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(stopWait):
		cmd.Process.Kill()
		t.Fatalf("the adapter still serves %s after its host (pid %d) was gone", stopWait, dead.Process.Pid)
	}
}
