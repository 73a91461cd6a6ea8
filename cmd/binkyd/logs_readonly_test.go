package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/logview"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/internal/gittest"
)

// The secrets of the fixture world, and a log that holds them.
const (
	envSecret   = "Env-S3cret-Value"
	slicePass   = "Sl1ce-Pa55word"
	valuePass   = "Val-Pa55word"
	fixtureLine = "token " + envSecret + " dsn postgres://acme_t:" + slicePass + "@127.0.0.1:5432/acme_t extra " + valuePass
)

// fixtureHome records, under home, world acme/feat-a-1234 (branch feat/a,
// worktree at wtPath of the repository at repo) with one secret of each
// kind, a second project's world of the same name, and the world's api
// log holding every secret. It returns the registry, still open (as the
// daemon keeps it).
func fixtureHome(t *testing.T, home, repo, wtPath string) *registry.Registry {
	t.Helper()
	ctx := context.Background()
	reg, err := registry.Open(ctx, filepath.Join(home, registry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "acme", Name: "feat-a-1234", Branch: "feat/a", Path: wtPath, Repo: repo, State: "up"})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.SetWorktreeSecrets(ctx, wt.ID, []string{envSecret}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*registry.Service{
		{WorktreeID: wt.ID, Name: "api", Kind: "cmd", State: "running"},
		{WorktreeID: wt.ID, Name: "db", Kind: "adapter", State: "running",
			Address: "postgres://acme_t:" + slicePass + "@127.0.0.1:5432/acme_t",
			Values:  map[string]string{"dsn": "acme:" + valuePass + "@tcp(127.0.0.1:3306)/acme_t"}},
	} {
		if err := reg.UpsertService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.UpsertWorktree(ctx, &registry.Worktree{Project: "other", Name: "feat-a-1234", Branch: "feat/a", Path: filepath.Join(t.TempDir(), "o"), State: "down"}); err != nil {
		t.Fatal(err)
	}
	dir := logview.Dir(home, "acme", "feat-a-1234")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api.log"), []byte("starting\n"+fixtureLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return reg
}

// gitWorld makes the repository of project acme and its worktree of
// branch feat/a, where fixtureHome's world lives, and returns both paths.
func gitWorld(t *testing.T) (repo, wtPath string) {
	t.Helper()
	gittest.Isolate(t)
	base := t.TempDir()
	repo = gittest.Repo(t, filepath.Join(base, "repo"), "acme")
	wtPath = gittest.Worktree(t, repo, filepath.Join(base, "repo.worktrees", "feat-a-1234"), "feat/a")
	return repo, wtPath
}

// fakeStatus answers status with world, or is no daemon at all.
type fakeStatus struct {
	world api.World
	calls int
}

func (f *fakeStatus) Call(_ context.Context, op string, _ any, _ api.Handlers, out any) error {
	f.calls++
	if op != api.OpStatus {
		return fmt.Errorf("unexpected op %s", op)
	}
	*(out.(*api.StatusResult)) = api.StatusResult{Worlds: []api.World{f.world}}
	return nil
}

var acmeWorld = api.World{Project: "acme", Worktree: "feat-a-1234", Services: []api.Service{{Name: "api"}, {Name: "db"}}}

// withSeams sets the daemon and the registry redactor logs uses, for one
// test (the tests that use them are not parallel).
func withSeams(t *testing.T, daemon func(*globals) (statusCaller, error), red func(context.Context, string) (*redact.Redactor, error)) {
	t.Helper()
	oldD, oldR := logsDaemon, registryRedactor
	t.Cleanup(func() { logsDaemon, registryRedactor = oldD, oldR })
	if daemon != nil {
		logsDaemon = daemon
	}
	if red != nil {
		registryRedactor = red
	}
}

func noDaemon(*globals) (statusCaller, error) {
	return nil, errors.New("daemon exited at start: open registry: database or disk is full")
}

// runLogs runs `binky logs args…` against home and returns its stdout,
// stderr and error.
func runLogs(t *testing.T, home string, c cli.Logs) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := &logsCmd{c}
	err := cmd.run(&globals{ctx: context.Background(), home: home}, &out, &errOut)
	return out.String(), errOut.String(), err
}

func checkRedacted(t *testing.T, what, out string) {
	t.Helper()
	if !strings.Contains(out, "starting") || !strings.Contains(out, "token *** dsn") {
		t.Errorf("%s: printed %q; want the log, redacted", what, out)
	}
	for _, s := range []string{envSecret, slicePass, valuePass} {
		if strings.Contains(out, s) {
			t.Errorf("%s: printed the secret %q: %q", what, s, out)
		}
	}
}

// TestLogsOnAFullDisk: with BINKY_HOME on a full file system, `binky logs`
// prints the log, redacted: with the daemon up (it keeps binky.db open,
// so a write-ahead log is on disk) and with no daemon (none can start).
// It mounts a small tmpfs, so it needs root.
func TestLogsOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a full disk is a small tmpfs, and mounting one needs root; TestLogsWhenTheRegistryCannotBeWritten injects the failure instead")
	}
	mnt := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	home := filepath.Join(mnt, "home")
	repo, wtPath := gitWorld(t)
	reg := fixtureHome(t, home, repo, wtPath)
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4<<10)
	for {
		if _, err := filler.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	filler.Close()
	if registry.Unwritable(mnt) == nil {
		t.Fatalf("%s still takes writes after filling it (else this test tests nothing)", mnt)
	}
	// The registry opens all the same: at the current schema opening
	// writes nothing (registry.Open; read-only where it must), so logs
	// redacts through logview.Redactor. TestLogsWhenTheRegistryCannotBeWritten
	// covers the read-only fallback for when it cannot.
	if _, err := logview.Redactor(context.Background(), home); err != nil {
		t.Fatalf("logview.Redactor on a full disk: %v; want the registry opened without writing", err)
	}

	d := &fakeStatus{world: acmeWorld}
	withSeams(t, func(*globals) (statusCaller, error) { return d, nil }, nil)
	out, errOut, err := runLogs(t, home, cli.Logs{Worktree: "feat-a-1234", Lines: 100})
	if err != nil {
		t.Fatalf("logs on a full disk, daemon up: %v (stderr %q)", err, errOut)
	}
	checkRedacted(t, "daemon up", out)

	// The daemon gone: its registry closed (merging the log into the file
	// if the disk lets it), and none can start.
	reg.Close()
	withSeams(t, noDaemon, nil)
	for _, c := range []cli.Logs{{Worktree: "feat/a", Project: "acme", Lines: 100}, {Worktree: "feat-a-1234", Service: "api", Project: "acme", Lines: 0}} {
		out, errOut, err = runLogs(t, home, c)
		if err != nil {
			t.Fatalf("logs %s on a full disk, no daemon: %v (stderr %q)", c.Worktree, err, errOut)
		}
		checkRedacted(t, "no daemon", out)
		if !strings.Contains(errOut, "found acme/feat-a-1234 in the registry") {
			t.Errorf("no daemon: stderr %q; want a note that the world was found in the registry", errOut)
		}
	}
	t.Chdir(wtPath)
	out, errOut, err = runLogs(t, home, cli.Logs{Lines: 100})
	if err != nil {
		t.Fatalf("logs in the worktree on a full disk, no daemon: %v (stderr %q)", err, errOut)
	}
	checkRedacted(t, "no daemon, no name", out)
}

// TestLogsWhenTheRegistryCannotBeWritten: the seam variant of the full
// disk, for any user: opening binky.db to write fails with ENOSPC (as
// registry.Open's migration does on a full disk); logs reads it read-only
// and prints the log redacted. A refused registry is not read around.
func TestLogsWhenTheRegistryCannotBeWritten(t *testing.T) {
	home := t.TempDir()
	wtPath := filepath.Join(t.TempDir(), "feat-a-1234")
	os.MkdirAll(wtPath, 0o700)
	reg := fixtureHome(t, home, filepath.Dir(wtPath), wtPath)
	defer reg.Close()
	full := func(context.Context, string) (*redact.Redactor, error) {
		return nil, fmt.Errorf("read the secrets to redact: open registry: %w", &os.PathError{Op: "write", Path: "binky.db-wal", Err: syscall.ENOSPC})
	}
	d := &fakeStatus{world: acmeWorld}
	withSeams(t, func(*globals) (statusCaller, error) { return d, nil }, full)
	out, errOut, err := runLogs(t, home, cli.Logs{Worktree: "feat-a-1234", Lines: 100})
	if err != nil {
		t.Fatalf("logs: %v (stderr %q)", err, errOut)
	}
	checkRedacted(t, "ENOSPC", out)
	if !strings.Contains(errOut, "no space left on device") {
		t.Errorf("stderr %q; want the write failure named", errOut)
	}

	withSeams(t, noDaemon, full)
	out, _, err = runLogs(t, home, cli.Logs{Worktree: "feat/a", Project: "acme", Lines: 100, JSON: true})
	if err != nil {
		t.Fatalf("logs --json, no daemon: %v", err)
	}
	checkRedacted(t, "ENOSPC, no daemon, --json", out)
	if !strings.Contains(out, `"project":"acme","worktree":"feat-a-1234","service":"api"`) {
		t.Errorf("--json: got %q", out)
	}

	newer := func(context.Context, string) (*redact.Redactor, error) {
		return nil, fmt.Errorf("read the secrets to redact: %w", registry.ErrNewerSchema)
	}
	withSeams(t, func(*globals) (statusCaller, error) { return d, nil }, newer)
	if _, _, err := runLogs(t, home, cli.Logs{Worktree: "feat-a-1234", Lines: 100}); err == nil || !errors.Is(err, registry.ErrNewerSchema) {
		t.Errorf("logs with a newer registry: %v; want it refused, not read around", err)
	}
}

// TestReadOnlyRedactorAsLogview: the redactor of the registry opened
// read-only knows every secret logview.Redactor knows, with the daemon up
// (its -wal on disk) and gone.
func TestReadOnlyRedactorAsLogview(t *testing.T) {
	home := t.TempDir()
	wt := filepath.Join(t.TempDir(), "wt")
	reg := fixtureHome(t, home, filepath.Dir(wt), wt)
	want, err := logview.Redactor(context.Background(), home)
	if err != nil {
		t.Fatal(err)
	}
	for _, closed := range []bool{false, true} { // the daemon up (a -wal on disk), then gone
		if closed {
			reg.Close()
		}
		got, err := readOnlyRedactor(context.Background(), home)
		if err != nil {
			t.Fatalf("readOnlyRedactor (registry closed %v): %v", closed, err)
		}
		for _, in := range []string{fixtureLine, "a " + slicePass + " b", envSecret[:8] + "\n" + envSecret[8:], "nothing secret"} {
			if g, w := got.String(in), want.String(in); g != w {
				t.Errorf("closed %v: read-only redacts %q as %q; logview as %q", closed, in, g, w)
			}
		}
	}
}

// TestLogsFindsByTheEnginesRules: with no daemon, logs finds its world in
// the registry opened read-only by the daemon's own rules (world.Find),
// with its messages: a branch, a name in the caller's project, a name of
// several projects refused from outside, no name in the worktree.
func TestLogsFindsByTheEnginesRules(t *testing.T) {
	home := t.TempDir()
	repo, wtPath := gitWorld(t)
	sub := filepath.Join(wtPath, "sub")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	fixtureHome(t, home, repo, wtPath).Close()
	withSeams(t, noDaemon, nil)
	outside := t.TempDir()
	for _, tc := range []struct {
		name, project, dir string
		err                string // else it finds acme/feat-a-1234
	}{
		{"feat-a-1234", "acme", outside, ""},
		{"feat/a", "acme", outside, ""},
		{"feat/a", "", sub, ""}, // standing in acme's worktree
		{"feat-a-1234", "", repo, ""},
		{"", "", sub, ""},
		{"feat/a", "", outside, `logs: "feat/a" names worlds in several projects (acme/feat-a-1234, other/feat-a-1234): run the command inside the project's repository, or pass --project (no daemon: `},
		{"nope", "acme", outside, `logs: project "acme" has no world named "nope" (binky status lists every world; binky up nope creates it) (no daemon: `},
		{"", "", outside, "logs: which worktree? " + outside + " is not inside a worktree of a git repository"},
	} {
		t.Chdir(tc.dir)
		out, errOut, err := runLogs(t, home, cli.Logs{Worktree: tc.name, Project: tc.project, Lines: 100})
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("logs %q --project %q in %s: %v; want an error starting %q", tc.name, tc.project, tc.dir, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("logs %q --project %q in %s: %v", tc.name, tc.project, tc.dir, err)
			continue
		}
		checkRedacted(t, "logs "+tc.name, out)
		if !strings.Contains(errOut, "found acme/feat-a-1234 in the registry") {
			t.Errorf("logs %q in %s: stderr %q; want acme/feat-a-1234 found in the registry", tc.name, tc.dir, errOut)
		}
	}
}
