package adaptertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// Options say which binary to test and against what.
type Options struct {
	// Binary is the adapter executable.
	Binary string
	// Adapter is the name sent in every request. Empty: describe's name.
	Adapter string
	// Config is the service's config table, sent with every request.
	Config map[string]any
	// AdminURL is the server to carve slices from (may hold a secret).
	AdminURL string
	// DataDir is the adapter's data directory. Empty: a temporary
	// directory, removed afterwards.
	DataDir string
	// Project is the project name sent in requests. Empty: "conformance".
	Project string
	// Owner is the home id sent in every request (Target.Owner). Empty:
	// one made up for the run. The claim check uses a second, different one.
	Owner string
	// Timeout bounds each call. Zero: 60 s.
	Timeout time.Duration
	// Env is the adapter's environment. Nil: client.MinimalEnv(os.Environ()).
	Env []string
	// Stderr receives what the adapter wrote on stderr, per call.
	Stderr func([]byte)
}

// Result is the outcome of one check.
type Result struct {
	// Check names the check: describe, provision, resolve, clone, destroy,
	// invalid, protocol or rpc.
	Check string
	// Tier is where it ran: oneshot, or oneshot+rpc for the comparison.
	Tier string
	OK   bool
	// Detail says what was seen (on success) or what was wrong.
	Detail string
}

// Tiers as Result.Tier names them.
const (
	TierOneShot = "oneshot"
	TierBoth    = "oneshot+rpc"
)

// Run runs every check against opts.Binary, calling report once per check
// in order, and destroys every slice it made before returning. failed counts
// the failed checks; err is set only when the suite itself could not run
// (no temporary directory). When describe fails the other checks are not
// run.
func Run(ctx context.Context, opts Options, report func(Result)) (failed int, err error) {
	if opts.Project == "" {
		opts.Project = "conformance"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.Owner == "" {
		id := make([]byte, 8)
		_, _ = rand.Read(id)
		opts.Owner = "conformance-" + hex.EncodeToString(id)
	}
	if opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "binky-conformance-")
		if err != nil {
			return 0, fmt.Errorf("create a data directory for the conformance run: %w", err)
		}
		defer os.RemoveAll(dir)
		opts.DataDir = dir
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	r := &runner{
		opts:  opts,
		bin:   &client.Binary{Path: opts.Binary, Env: opts.Env, Stderr: opts.Stderr},
		slice: "conformance_" + hex.EncodeToString(suffix),
		made:  map[string]bool{},
	}
	defer r.cleanup(ctx)
	emit := func(res Result) {
		if !res.OK {
			failed++
		}
		if report != nil {
			report(res)
		}
	}
	for _, c := range r.checks() {
		detail, err := c.run(ctx)
		res := Result{Check: c.name, Tier: c.tier, OK: err == nil, Detail: detail}
		if err != nil {
			res.Detail = err.Error()
		}
		emit(res)
		if c.name == checkDescribe && err != nil {
			break
		}
	}
	return failed, nil
}

// Test runs the suite as subtests of t (one per check), with a temporary
// data directory and the adapter's stderr in the test log. It is what an
// adapter module's own test calls:
//
//	adaptertest.Test(t, adaptertest.Options{Binary: bin, AdminURL: url})
func Test(t *testing.T, opts Options) {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Stderr == nil {
		opts.Stderr = func(b []byte) { t.Logf("adapter stderr:\n%s", b) }
	}
	_, err := Run(t.Context(), opts, func(r Result) {
		t.Run(r.Check, func(t *testing.T) {
			if !r.OK {
				t.Errorf("%s (%s tier)", r.Detail, r.Tier)
				return
			}
			t.Log(r.Detail)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runner carries one run's state.
type runner struct {
	opts    Options
	bin     *client.Binary
	desc    *sdk.DescribeResponse
	adapter string
	slice   string          // the main slice; others derive from it
	made    map[string]bool // slices that may exist, destroyed at the end
}

func (r *runner) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.Timeout)
}

func (r *runner) header() sdk.Header {
	return sdk.Header{Protocol: sdk.Protocol, Adapter: r.adapter}
}

func (r *runner) target(slice string) sdk.Target {
	return sdk.Target{
		Slice:    slice,
		Project:  r.opts.Project,
		AdminURL: r.opts.AdminURL,
		DataDir:  r.opts.DataDir,
		Config:   r.opts.Config,
		Owner:    r.opts.Owner,
		// The label is what another home's refusal shows.
		OwnerLabel: "the conformance run",
	}
}

// cleanup destroys every slice the run may have made, even when ctx is
// already cancelled.
func (r *runner) cleanup(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for s := range r.made {
		cctx, cancel := r.call(ctx)
		_, _ = client.Destroy(cctx, r.bin, &sdk.DestroyRequest{Header: r.header(), Target: r.target(s)})
		cancel()
	}
}
