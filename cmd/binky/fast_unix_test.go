//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// TestMain lets the test binary be binky: with BINKY_TEST_CLI=fast it runs
// its arguments as binky does (the fast path, else kong), with
// BINKY_TEST_CLI=kong through kong alone.
func TestMain(m *testing.M) {
	switch os.Getenv("BINKY_TEST_CLI") {
	case "fast":
		os.Exit(run(os.Args[1:]))
	case "kong":
		os.Exit(runKong(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestFastPathMatchesKong runs each command line twice, as binky runs it
// and through kong alone, against the same stand-in daemon, and wants the
// same stdout, stderr and exit status: the fast path's answers, and every
// help text, completion and error it leaves to kong.
func TestFastPathMatchesKong(t *testing.T) {
	home := shortTempDir(t)
	serveFakeDaemon(t, home)
	lines := [][]string{
		{"--version"},
		{"env", "wt"},
		{"env"},
		{"env", "wt", "--json"},
		{"env", "--dotenv", "wt"},
		{"env", "--direct", "wt"},
		{"env", "--direct", "--dotenv", "--project", "shop", "wt"},
		{"env", "--project=shop", "wt"},
		{"env", "sleepy"},  // a world that is down: the warning on stderr
		{"env", "missing"}, // the daemon's error
		{"--home", home, "env", "wt"},
		{"env", "wt", "--home=" + home},
		{"status"},
		{"status", "--json"},
		{"--home=" + home, "status"},
		// Left to kong: help, errors, completion.
		{},
		{"--help"},
		{"env", "--help"},
		{"env", "-h"},
		{"status", "--help"},
		{"env", "--bogus"},
		{"status", "--bogus"},
		{"env", "a", "b"},
		{"status", "wt"},
		{"env", "--project"},
		{"env", "--json", "--json"},
		{"env", "--version"},
		{"envv"},
		{"__complete", "--", "env", "--"},
		{"__complete", "--", "env", ""},
		{"__complete", "--", "st"},
		{"__complete", "--", "status", "--j"},
		{"completion", "bash"},
	}
	for _, args := range lines {
		fast := runAs(t, "fast", home, args)
		slow := runAs(t, "kong", home, args)
		if fast != slow {
			t.Errorf("binky %q:\n as binky runs it: %+v\n through kong:     %+v", args, fast, slow)
		}
	}
	// The stand-in answers: the comparisons above compared answers, not
	// two failures to reach a daemon.
	if got := runAs(t, "fast", home, []string{"env", "wt"}); got.code != 0 || !strings.Contains(got.stdout, "https://web.wt.localhost") {
		t.Errorf("binky env wt = %+v; want the stand-in's coordinates", got)
	}
	if got := runAs(t, "fast", home, []string{"status"}); got.code != 0 || !strings.Contains(got.stdout, "shop") {
		t.Errorf("binky status = %+v; want the stand-in's worlds", got)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// runAs runs the test binary as binky (mode fast) or as kong alone.
func runAs(t *testing.T, mode, home string, args []string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BINKY_TEST_CLI="+mode, "BINKY_HOME="+home, "NO_COLOR=1")
	cmd.Dir = home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %q: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// shortTempDir is a temporary directory whose socket path fits a
// sockaddr_un.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "bkf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// serveFakeDaemon answers ping, env and status on home's socket with
// fixed results: env of "missing" is an error, of "sleepy" a world that
// is down.
func serveFakeDaemon(t *testing.T, home string) {
	ln, err := net.Listen("unix", filepath.Join(home, api.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	answer := func(req api.Request) any {
		switch req.Op {
		case api.OpPing:
			return map[string]any{"result": api.PingResult{Pid: 1, Version: "test", Home: home}}
		case api.OpEnv:
			var args api.EnvArgs
			json.Unmarshal(req.Args, &args)
			switch args.Name {
			case "missing":
				return map[string]any{"error": api.Error{Code: "not_found", Message: `no world "missing"`}}
			case "sleepy":
				return map[string]any{"result": api.EnvResult{Project: "shop", Worktree: "sleepy", State: "down", Env: map[string]string{"web": "https://web.sleepy.localhost"}}}
			}
			return map[string]any{"result": api.EnvResult{Project: "shop", Worktree: "wt", State: "up",
				Env: map[string]string{"web": "https://web.wt.localhost", "db": "postgres://127.0.0.1:41001/shop"}, Order: []string{"web", "db"},
				Direct: map[string]string{"web": "http://127.0.0.1:41000"}}}
		case api.OpStatus:
			return map[string]any{"result": api.StatusResult{Worlds: []api.World{
				{Project: "shop", Repo: "/src/shop", Worktree: "wt", Branch: "feat/a", State: "up", Ports: [2]int{41000, 41009},
					Services: []api.Service{{Name: "web", State: "running", Pid: 42, Port: 41000, URL: "https://web.wt.localhost"}, {Name: "db", State: "running", Address: "127.0.0.1:41001"}}},
				{Project: "shop", Repo: "/src/shop", Worktree: "sleepy", Branch: "sleepy", State: "down"},
			}}}
		}
		return map[string]any{"error": api.Error{Code: "invalid", Message: "unknown op " + req.Op}}
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				line, err := bufio.NewReader(conn).ReadBytes('\n')
				if err != nil {
					return
				}
				var req api.Request
				if json.Unmarshal(line, &req) != nil {
					return
				}
				b, _ := json.Marshal(answer(req))
				conn.Write(append(b, '\n'))
			}()
		}
	}()
}
