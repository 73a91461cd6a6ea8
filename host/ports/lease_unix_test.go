//go:build !windows

package ports

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/binkyhq/binky/internal/testbin"
	"github.com/binkyhq/binky/internal/testroot"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is the other user of these tests.
const nobody = 65534

// TestLeaseStoreModes: whatever the umask, the directory is made sticky
// and world-writable, this user's subdirectory 0755, its lock file 0600
// (no other user can open it) and each lease 0644.
func TestLeaseStoreModes(t *testing.T) {
	// Not parallel: the umask is the process's.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "nested", "leases")
	l := openTestLeases(t, dir)
	h := newHome(t, "", l, [2]int{20100, 20199})
	reserve(t, h, "p", "w", 2)
	sub := filepath.Join(dir, ownerPrefix+strconv.Itoa(os.Geteuid()))
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{
		{dir, fs.ModeDir | fs.ModeSticky | 0o777},
		{sub, fs.ModeDir | 0o755},
		{filepath.Join(sub, lockName), 0o600},
		{filepath.Join(sub, "block-20100-20101.json"), 0o644},
	} {
		fi, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.want {
			t.Errorf("%s: mode %v; want %v", c.path, fi.Mode(), c.want)
		}
	}
}

// TestLeaseDirRefused: a lease directory that is not one, that others
// could tamper with, or that belongs to another user who is not root, is
// refused with the reason and the fix.
func TestLeaseDirRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		make     func(t *testing.T, dir string)
		wantErr  []string // nil = accepted
		needRoot bool
	}{
		{"symbolic link", func(t *testing.T, dir string) {
			must(t, os.Symlink(t.TempDir(), dir))
		}, []string{"is refused: it is a symbolic link"}, false},
		{"a file", func(t *testing.T, dir string) {
			must(t, os.WriteFile(dir, nil, 0o644))
		}, []string{"not a directory"}, false},
		{"writable by others, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, 0o777))
		}, []string{"others may write it", "chmod +t"}, false},
		{"writable by the group, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, 0o775))
		}, []string{"others may write it"}, false},
		{"another user's, not sticky", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.Chown(dir, nobody, nobody))
		}, []string{"belongs to uid 65534, neither root nor you", "sudo chown root:root "}, true},
		{"another user's, sticky (the first user made it)", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, fs.ModeSticky|0o777))
			must(t, os.Chown(dir, nobody, nobody))
		}, []string{"belongs to uid 65534, neither root nor you", "systemd-tmpfiles", LeaseDirEnv}, true},
		{"private and mine", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
		}, nil, false},
		{"lock file is a symbolic link", func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir, 0o700))
			sub := filepath.Join(dir, ownerPrefix+strconv.Itoa(os.Geteuid()))
			must(t, os.Mkdir(sub, 0o755))
			target := filepath.Join(t.TempDir(), "target")
			must(t, os.WriteFile(target, nil, 0o600))
			must(t, os.Symlink(target, filepath.Join(sub, lockName)))
		}, []string{"symbolic link"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needRoot {
				needRoot(t)
			}
			dir := filepath.Join(t.TempDir(), "leases")
			tc.make(t, dir)
			l, err := OpenLeases(dir, LeaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, unlock, err := l.lock(context.Background())
			if err == nil {
				unlock()
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("lock = %v; want the store accepted", err)
			case tc.wantErr != nil && err == nil:
				t.Errorf("lock = nil; want an error saying %q", tc.wantErr)
			case tc.wantErr != nil:
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("lock = %v; want it to say %q", err, w)
					}
				}
			}
			if tc.wantErr == nil || tc.name == "lock file is a symbolic link" {
				return
			}
			// Doctor's read-only view refuses it the same way.
			var refused *DirRefusedError
			if _, err := InspectLeases(dir); !errors.As(err, &refused) || refused.Dir != dir {
				t.Errorf("InspectLeases = %v; want a DirRefusedError for %s", err, dir)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// needRoot skips a test that acts as another user unless this process is
// root; under CI=true (which runs as root) it fails instead.
func needRoot(t *testing.T) {
	t.Helper()
	testroot.Need(t, "to act as another user (uid 65534)")
}

// otherUser runs this test binary as uid 65534 (nobody): the binary is
// copied under base, a directory nobody may enter, with a temporary
// directory of nobody's own.
type otherUser struct {
	base, bin, tmp string
}

func newOtherUser(t *testing.T) *otherUser {
	t.Helper()
	needRoot(t)
	base, err := os.MkdirTemp("", "binky-ports-users-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	u := &otherUser{base: base, bin: filepath.Join(base, "ports.test")}
	testbin.CopySelf(t, u.bin)
	u.tmp = u.dir(t, "tmp")
	return u
}

// dir makes a directory under base that nobody owns (mode 0700).
func (u *otherUser) dir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(u.base, name)
	must(t, os.Mkdir(d, 0o700))
	must(t, os.Chown(d, nobody, nobody))
	return d
}

// cmd is TestHelperAsUser doing action as nobody; env adds to this
// process's environment.
func (u *otherUser) cmd(action string, env ...string) *exec.Cmd {
	cmd := exec.Command(u.bin, "-test.run=^TestHelperAsUser$")
	cmd.Dir = u.base
	cmd.Env = append(os.Environ(), "BINKY_PORTS_AS="+action, "TMPDIR="+u.tmp)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Stderr = os.Stderr
	return cmd
}

// run runs action as nobody and returns its output; a binary that cannot
// be run as nobody here (a noexec mount) skips the test, or fails it
// under CI.
func (u *otherUser) run(t *testing.T, action string, env ...string) string {
	t.Helper()
	cmd := u.cmd(action, env...)
	cmd.Stderr = nil
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot run the test binary as uid %d: %v", nobody, err)
		}
		t.Skipf("cannot run the test binary as uid %d here: %v", nobody, err)
	}
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", action, nobody, err, out)
	}
	return string(out)
}

// TestHelperAsUser is the other process of the tests below: it runs as
// nobody (or as this user, for TestOwnLockHolderNamed) and does what
// BINKY_PORTS_AS says in the lease store BINKY_PORTS_LEASES.
func TestHelperAsUser(t *testing.T) {
	action := os.Getenv("BINKY_PORTS_AS")
	if action == "" {
		t.Skip("helper process for the tests that act as another user")
	}
	dir := os.Getenv("BINKY_PORTS_LEASES")
	home := os.Getenv("BINKY_PORTS_HOME")
	switch action {
	case "junk":
		// Lease files that must block no one, and one real lease.
		h := newHome(t, home, openTestLeases(t, dir), [2]int{26000, 26999})
		h.noDaemon()
		sub := ownSub(t, h.a.leases)
		put := func(name string, b []byte) { must(t, os.WriteFile(filepath.Join(sub, name), b, 0o644)) }
		lease := func(le *Lease) { b, _ := json.Marshal(le); put(leaseName(le.Lo, le.Hi), b) }
		put("block-26000-65535.json", []byte("{}"))
		lease(h.a.newLease("p", "wide", 26000, 26000+MaxBlock))
		root := h.a.newLease("p", "root", 26000, 26003)
		root.UID = 0
		lease(root)
		must(t, os.Symlink(filepath.Join(sub, "block-26000-26003.json"), filepath.Join(sub, "block-26000-26004.json")))
		must(t, syscall.Mkfifo(filepath.Join(sub, "block-26000-26005.json"), 0o644))
		lease(h.a.newLease("p", "low", 800, 803))
		lease(h.a.newLease("p", "real", 26100, 26103))
	case "lock":
		// Hold this user's lock, and the old shared .lock, until stdin
		// closes; say whether the other user's lock file opens.
		l := openTestLeases(t, dir)
		_, unlock, err := l.lock(context.Background())
		must(t, err)
		defer unlock()
		old, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o666)
		must(t, err)
		must(t, syscall.Flock(int(old.Fd()), syscall.LOCK_EX))
		fmt.Printf("locked %d\n", os.Getpid())
		if p := os.Getenv("BINKY_PORTS_OTHER_LOCK"); p != "" {
			f, err := os.OpenFile(p, os.O_RDONLY, 0)
			if err == nil {
				f.Close()
			}
			fmt.Printf("open other lock: %v\n", err)
		}
		io.Copy(io.Discard, os.Stdin)
	case "squat":
		// Take uid 0's subdirectory name, and put in it a lease naming
		// uid 0 and one of its homes.
		sq := filepath.Join(dir, ownerPrefix+"0")
		must(t, os.Mkdir(sq, 0o755))
		le := &Lease{Lo: 27000, Hi: 27003, UID: 0, HomeID: os.Getenv("BINKY_PORTS_HOME_ID"), HomeDir: home, Project: "p", Worktree: "w"}
		b, _ := json.Marshal(le)
		must(t, os.WriteFile(filepath.Join(sq, leaseName(27000, 27003)), b, 0o644))
	case "reserve":
		n, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_N"))
		size, _ := strconv.Atoi(os.Getenv("BINKY_PORTS_SIZE"))
		var rng [2]int
		fmt.Sscanf(os.Getenv("BINKY_PORTS_RANGE"), "%d-%d", &rng[0], &rng[1])
		h := newHome(t, home, openTestLeases(t, dir), rng)
		leaseMany(t, h, "uid"+strconv.Itoa(os.Geteuid()), n, size)
		for _, ig := range ignoredOf(h.a) {
			fmt.Println(ig)
		}
	default:
		t.Fatalf("unknown action %q", action)
	}
}

// TestOtherUsersLeasesDoNotBlock: another user's lease files that claim
// nothing — junk, a lease wider than a world's block, one naming a uid
// that is not its owner's, a symbolic link and a FIFO named like leases,
// one of ports that user cannot bind — never block a reservation, and each
// is reported with its path, its owner and why; the same user's real
// lease still counts.
func TestOtherUsersLeasesDoNotBlock(t *testing.T) {
	t.Parallel()
	u := newOtherUser(t)
	leaseDir := filepath.Join(u.base, "leases")
	l := openTestLeases(t, leaseDir)
	u.run(t, "junk", "BINKY_PORTS_LEASES="+leaseDir, "BINKY_PORTS_HOME="+u.dir(t, "home"))

	h := newHome(t, "", l, [2]int{26000, 26999})
	if lo, hi := reserve(t, h, "p", "w", 4); lo != 26000 || hi != 26003 {
		t.Errorf("reserve over the other user's junk = %d-%d; want 26000-26003", lo, hi)
	}
	sub := filepath.Join(leaseDir, ownerPrefix+strconv.Itoa(nobody))
	want := map[string]string{
		filepath.Join(sub, "block-26000-65535.json"):         "it names ports 0-0, not the 26000-65535 of its name",
		filepath.Join(sub, leaseName(26000, 26000+MaxBlock)): "more than one world's block may",
		filepath.Join(sub, "block-26000-26003.json"):         "it names uid 0 but belongs to uid 65534",
		filepath.Join(sub, "block-26000-26004.json"):         "it is a symbolic link, not a regular file",
		filepath.Join(sub, "block-26000-26005.json"):         "it is a named pipe (FIFO), not a regular file",
	}
	if unprivilegedPortStart() > 800 {
		want[filepath.Join(sub, "block-800-803.json")] = "it covers port 800, below " + strconv.Itoa(unprivilegedPortStart()) + ", which uid 65534 cannot bind"
	}
	checkIgnored(t, ignoredOf(h.a), want, strconv.Itoa(nobody))
	// Its real lease (its home exists and is its own) counts: a block of
	// 100 ports skips it.
	if lo, hi := reserve(t, h, "p", "big", 100); lo != 26104 || hi != 26203 {
		t.Errorf("reserve of 100 ports = %d-%d; want 26104-26203, after uid %d's lease of 26100-26103", lo, hi, nobody)
	}
}

// TestForeignLockDoesNotBlock: another user holding their own lease lock
// and the old shared .lock does not slow a reservation, and cannot even
// open this user's lock file.
func TestForeignLockDoesNotBlock(t *testing.T) {
	t.Parallel()
	u := newOtherUser(t)
	leaseDir := filepath.Join(u.base, "leases")
	l := openTestLeasesWith(t, leaseDir, LeaseOptions{LockWait: time.Second})
	h := newHome(t, "", l, [2]int{26000, 26999})
	reserve(t, h, "p", "first", 2) // makes this user's lock file
	myLock := filepath.Join(ownSub(t, l), lockName)

	cmd := u.cmd("lock", "BINKY_PORTS_LEASES="+leaseDir, "BINKY_PORTS_OTHER_LOCK="+myLock)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked ") {
		t.Fatalf("the other user's locker said %q, %v", line, err)
	}
	line, _ = r.ReadString('\n')
	if !strings.Contains(line, "permission denied") {
		t.Errorf("the other user opening %s: %q; want permission denied", myLock, line)
	}
	// Both of its locks are held now: this user's reservations do not
	// wait for them.
	if _, _, err := h.a.Reserve(context.Background(), "p", "second", 2, [2]int{}); err != nil {
		t.Errorf("reserve while another user holds their locks: %v", err)
	}
	if _, err := h.a.SyncLeases(context.Background()); err != nil {
		t.Errorf("sync while another user holds their locks: %v", err)
	}
}

// TestOwnLockHolderNamed: when another process of this user holds this
// user's lease lock, a reservation fails after the wait bound naming the
// lock file and the holder's pid and uid.
func TestOwnLockHolderNamed(t *testing.T) {
	t.Parallel()
	if !runtimeHasLockHolders() {
		t.Skip("no /proc/locks: the holder cannot be named here")
	}
	leaseDir := t.TempDir()
	l := openTestLeasesWith(t, leaseDir, LeaseOptions{LockWait: 100 * time.Millisecond})
	h := newHome(t, "", l, [2]int{26000, 26999})
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAsUser$")
	cmd.Env = append(os.Environ(), "BINKY_PORTS_AS=lock", "BINKY_PORTS_LEASES="+leaseDir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked ") {
		t.Fatalf("the locker said %q, %v", line, err)
	}
	_, _, err = h.a.Reserve(context.Background(), "p", "w", 2, [2]int{})
	lockPath := filepath.Join(ownSub(t, l), lockName)
	want := fmt.Sprintf("port lease lock %s is held by pid %d (uid %d): still held after 100ms", lockPath, cmd.Process.Pid, os.Geteuid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reserve while another process holds the lock = %v; want %q", err, want)
	}
}

// TestSquattedUserDirectory: another user who made this user's
// subdirectory name first does not stop this user — the store moves to
// the next name — and the lease the squatter put there counts only as the
// squatter's: it names uid 0, so it is ignored.
func TestSquattedUserDirectory(t *testing.T) {
	t.Parallel()
	u := newOtherUser(t)
	leaseDir := filepath.Join(u.base, "leases")
	l, err := OpenLeases(leaseDir, LeaseOptions{})
	must(t, err)
	must(t, makeTopDir(leaseDir))
	homeDir := t.TempDir()
	id := newID(t)
	u.run(t, "squat", "BINKY_PORTS_LEASES="+leaseDir, "BINKY_PORTS_HOME="+homeDir, "BINKY_PORTS_HOME_ID="+id)

	if got, want := ownSub(t, l), filepath.Join(leaseDir, ownerPrefix+"0.2"); got != want {
		t.Fatalf("this user's subdirectory = %s; want %s (the first is squatted)", got, want)
	}
	h := newHome(t, homeDir, l, [2]int{27000, 27099})
	if lo, hi := reserve(t, h, "p", "w", 4); lo != 27000 || hi != 27003 {
		t.Errorf("reserve = %d-%d; want 27000-27003, over the squatter's lease", lo, hi)
	}
	squatted := filepath.Join(leaseDir, ownerPrefix+"0", leaseName(27000, 27003))
	checkIgnored(t, ignoredOf(h.a), map[string]string{squatted: "it names uid 0 but belongs to uid 65534"}, strconv.Itoa(nobody))
	rep, err := InspectLeases(leaseDir)
	must(t, err)
	if !slices.Contains(rep.Squatted, ownerPrefix+"0 by uid 65534") || rep.Mine != filepath.Join(leaseDir, ownerPrefix+"0.2") {
		t.Errorf("InspectLeases: squatted %v, mine %s; want uid-0 by uid 65534, and uid-0.2", rep.Squatted, rep.Mine)
	}
}

// TestTwoUsersRace: root and nobody, each with twenty reservations at
// once from one range, share no lock: the re-check after each write keeps
// them apart. No two kept blocks or leases overlap.
func TestTwoUsersRace(t *testing.T) {
	t.Parallel()
	u := newOtherUser(t)
	leaseDir := filepath.Join(u.base, "leases")
	l := openTestLeases(t, leaseDir)
	rng := [2]int{28000, 28199}
	const n, size = 20, 3
	cmd := u.cmd("reserve", "BINKY_PORTS_LEASES="+leaseDir, "BINKY_PORTS_HOME="+u.dir(t, "home"),
		"BINKY_PORTS_N="+strconv.Itoa(n), "BINKY_PORTS_SIZE="+strconv.Itoa(size), fmt.Sprintf("BINKY_PORTS_RANGE=%d-%d", rng[0], rng[1]))
	out, err := cmd.StdoutPipe()
	must(t, err)
	h := newHome(t, "", l, rng)
	must(t, cmd.Start())
	got := reserveAtOnce(t, h, "root", n, size)
	for k, b := range scanLeased(out) {
		got[k] = b
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reservations as uid %d: %v", nobody, err)
	}
	if len(got) != 2*n {
		t.Fatalf("got %d blocks %v; want %d", len(got), got, 2*n)
	}
	checkDisjoint(t, got, size, rng)
	if files := checkLeasesDisjoint(t, l); len(files) != 2*n {
		t.Errorf("%d lease files; want %d", len(files), 2*n)
	}
}

// TestGoneHomeOfAnotherUser: nobody's reservation does not count a lease
// of root's whose home is gone and whose daemon does not run (and cannot
// delete it), while a lease of root's live home — inside a directory
// nobody cannot enter — counts.
func TestGoneHomeOfAnotherUser(t *testing.T) {
	t.Parallel()
	u := newOtherUser(t)
	leaseDir := filepath.Join(u.base, "leases")
	l := openTestLeases(t, leaseDir)
	rng := [2]int{29300, 29307}
	private := filepath.Join(u.base, "private")
	must(t, os.Mkdir(private, 0o700))
	liveDir := filepath.Join(private, "home")
	must(t, os.Mkdir(liveDir, 0o700))
	live := newHome(t, liveDir, l, rng)
	live.noDaemon()
	reserve(t, live, "p", "w", 4) // 29300-29303
	gone := filepath.Join(u.base, "gone")
	must(t, os.Mkdir(gone, 0o700))
	g := newHome(t, gone, l, rng)
	g.noDaemon()
	if lo, _ := reserve(t, g, "p", "w", 4); lo != 29304 {
		t.Fatalf("root's second home got lo %d; want 29304", lo)
	}
	g.close()
	must(t, os.RemoveAll(gone))

	out := u.run(t, "reserve", "BINKY_PORTS_LEASES="+leaseDir, "BINKY_PORTS_HOME="+u.dir(t, "home"),
		"BINKY_PORTS_N=1", "BINKY_PORTS_SIZE=4", fmt.Sprintf("BINKY_PORTS_RANGE=%d-%d", rng[0], rng[1]))
	if b := scanLeased(strings.NewReader(out)); b["uid65534/w0"] != [2]int{29304, 29307} {
		t.Errorf("nobody reserved %v; want 29304-29307, the gone home's block\n%s", b, out)
	}
	goneLease := filepath.Join(ownSub(t, l), leaseName(29304, 29307))
	wantLine := fmt.Sprintf("ignored port lease %s (owner uid 0): its home %s does not exist, and it names no daemon", goneLease, mustCanonical(t, u.base)+"/gone")
	if !strings.Contains(out, wantLine) {
		t.Errorf("nobody's reservation said:\n%s\nwant the line %q", out, wantLine)
	}
	if _, err := os.Stat(goneLease); err != nil {
		t.Errorf("root's gone lease: %v; want it left (nobody cannot delete it)", err)
	}
}
