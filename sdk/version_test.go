package sdk

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunVersion(t *testing.T) {
	t.Parallel()
	cmd := helperCmd("--version")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("--version: got %v; want exit 0 (stderr: %s)", err, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"binky-adapter-fake test ", "(protocol 1, commit "} {
		if !strings.Contains(got, want) {
			t.Errorf("--version: got %q; want it to contain %q", got, want)
		}
	}
}

// unversioned is an adapter that leaves describe's version empty.
type unversioned struct{ fakeAdapter }

func (unversioned) Describe(context.Context, *DescribeRequest) (*DescribeResponse, error) {
	return &DescribeResponse{Name: "plain"}, nil
}

func TestDescribeFillsVersion(t *testing.T) {
	t.Parallel()
	resp, err := rpcCapable{unversioned{}}.Describe(context.Background(), &DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := BuildVersion()
	if resp.Version == "" || resp.Version != want {
		t.Errorf("version: got %q; want %q", resp.Version, want)
	}
	var out bytes.Buffer
	if code := printVersion(context.Background(), unversioned{}, "prog", &out); code != 0 {
		t.Errorf("exit: got %d; want 0", code)
	}
	if !strings.HasPrefix(out.String(), "binky-adapter-plain "+want+" (protocol 1, commit ") {
		t.Errorf("--version: got %q", out.String())
	}
}

func TestBuildVersionFromLinker(t *testing.T) {
	// Not parallel: it sets the linker's variables.
	oldV, oldC := version, commit
	t.Cleanup(func() { version, commit = oldV, oldC })
	version, commit = "v1.2.3", "0123456789abcdef0123"
	v, c := BuildVersion()
	if v != "v1.2.3" || c != "0123456789ab" {
		t.Errorf("got %q, %q; want v1.2.3, 0123456789ab", v, c)
	}
}
