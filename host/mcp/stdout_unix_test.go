//go:build unix

package mcp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestProtocolOutputDivertsStrayWrites re-executes the test binary as a
// child that takes stdout for the protocol and then writes through every
// other path to stdout: only the protocol bytes may reach the real stdout.
func TestProtocolOutputDivertsStrayWrites(t *testing.T) {
	if os.Getenv("BINKY_MCP_STDOUT_CHILD") == "1" {
		out, err := ProtocolOutput()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("stray fmt.Println")
		os.Stdout.WriteString("stray os.Stdout\n")
		sh := exec.Command("sh", "-c", "echo stray child")
		sh.Stdout = os.Stdout
		sh.Run()
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"x"}`)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProtocolOutputDivertsStrayWrites$")
	cmd.Env = append(os.Environ(), "BINKY_MCP_STDOUT_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	if got, want := stdout.String(), "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"; got != want {
		t.Errorf("stdout: got %q; want only the protocol line %q", got, want)
	}
	for _, stray := range []string{"stray fmt.Println", "stray os.Stdout", "stray child"} {
		if !bytes.Contains(stderr.Bytes(), []byte(stray)) {
			t.Errorf("stderr %q lacks %q; want stray stdout writes diverted there", stderr.String(), stray)
		}
	}
}
