package ports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
)

// LeaseDirEnv names the environment variable that overrides the lease
// directory (DefaultLeaseDir). Tests set it so that their homes share one
// store without touching the machine's.
const LeaseDirEnv = "BINKY_PORT_LEASES"

// HomeIDFile is the file in a BINKY_HOME that holds the home's id on one
// line. The daemon writes it at start (it mirrors the registry's home id);
// the lease store reads it to tell a live home from one that was deleted
// (no directory, no file) or deleted and made again (another id).
const HomeIDFile = "home.id"

// MaxBlock is the most ports one world's block may have. A world whose
// services ask for more is refused at up, and a lease wider than this is
// no world's: every reader ignores it.
const MaxBlock = 256

// DefaultLockWait bounds the wait for this user's lease lock.
const DefaultLockWait = 5 * time.Second

// lockName is the lock file in each user's lease directory.
const lockName = ".lock"

// tmpPrefix starts the name of a lease being written.
const tmpPrefix = ".tmp-"

// maxHomeChecks bounds the looks at home directories in flight at once.
const maxHomeChecks = 8

// maxLeaseSize bounds what is read of a lease file: a lease is ~300 bytes.
const maxLeaseSize = 64 << 10

// Lease is one leased block, as its file in a user's lease directory holds
// it.
type Lease struct {
	Lo  int `json:"lo"`
	Hi  int `json:"hi"`
	UID int `json:"uid"` // the user whose daemon wrote it (-1 on Windows)
	// SID is the writer's owner SID on Windows (files it makes belong to
	// it); empty on Unix.
	SID      string `json:"sid,omitempty"`
	HomeID   string `json:"home_id"`  // the home's id (HomeIDFile)
	HomeDir  string `json:"home_dir"` // the home's directory, absolute
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Pid      int    `json:"pid"` // the daemon that wrote it
	// PidStart is when that daemon started, as the platform counts it
	// (Linux: field 22 of /proc/<pid>/stat, clock ticks after boot;
	// Windows: the creation time), so a recycled pid is not taken for
	// it. 0 when unknown.
	PidStart uint64    `json:"pid_start,omitempty"`
	Created  time.Time `json:"created"`
}

// LeaseOptions tune a lease store; the zero value is the default.
type LeaseOptions struct {
	// LockWait bounds the wait for this user's lease lock (held by
	// another process of this user); 0 means DefaultLockWait.
	LockWait time.Duration
}

// Leases is the machine-global store of port-block leases. The shared
// directory holds one subdirectory per user (uid-<uid> on Unix,
// sid-<SID> on Windows), each made, written and locked by that user alone
// and readable by all: one file per leased block (block-<lo>-<hi>.json)
// and the user's lock file. A reader counts a lease only when it is a
// claim it can verify (leaseclaim.go); a writer re-reads every other
// user's leases after writing its own (leased.go), so no lock is shared
// between users. The zero value is not usable; see OpenLeases.
type Leases struct {
	dir      string
	me       string // this process's user, as the store names users
	lockWait time.Duration
	// sem serializes this process's lockers before they reach the file
	// lock, so that they queue in order instead of polling it together.
	sem chan struct{}
	// busySince is when a locker last gave up after the whole LockWait
	// (unix nanoseconds; 0 when the last try got the lock).
	busySince atomic.Int64
	// homeChecks bounds the looks at other homes' directories that have
	// not ended (leaseLive).
	homeChecks chan struct{}
	// subdir, when set, is the name of this user's subdirectory instead
	// of the first of the user's names (tests: two lock domains of one
	// user stand for two users).
	subdir string
}

// DefaultLeaseDir is the lease directory: $BINKY_PORT_LEASES when set,
// else the platform's machine-wide default (on Unix
// /tmp/binky-port-leases, sticky and world-writable like /tmp; on
// Windows %ProgramData%\binky\port-leases).
func DefaultLeaseDir() string {
	if d := os.Getenv(LeaseDirEnv); d != "" {
		return d
	}
	return defaultLeaseDir()
}

// OpenLeases returns the lease store in dir. It touches nothing there: every
// use makes the directory when missing (mode 01777 on Unix, whatever the
// umask) and this user's subdirectory in it, and checks both (Check), so
// a daemon starts even while the store is refused or unavailable and
// leases once it is fixed.
func OpenLeases(dir string, opts LeaseOptions) (*Leases, error) {
	if dir == "" {
		return nil, errors.New("open port leases: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open port leases in %s: %w", dir, err)
	}
	me, err := currentOwner()
	if err != nil {
		return nil, fmt.Errorf("open port leases in %s: this process's user: %w", abs, err)
	}
	wait := opts.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	return &Leases{dir: abs, me: me, lockWait: wait, sem: make(chan struct{}, 1), homeChecks: make(chan struct{}, maxHomeChecks)}, nil
}

// Dir is the lease directory.
func (l *Leases) Dir() string { return l.dir }

// Check makes the lease directory and this user's subdirectory when
// missing and checks that both can be trusted; the error says why not and
// what fixes it (a *DirRefusedError when the directory is refused).
func (l *Leases) Check() error {
	_, err := l.own()
	return err
}

func leaseName(lo, hi int) string { return fmt.Sprintf("block-%d-%d.json", lo, hi) }

// parseLeaseName reads lo and hi out of "block-<lo>-<hi>.json".
func parseLeaseName(name string) (lo, hi int, ok bool) {
	mid, ok := strings.CutPrefix(name, "block-")
	if !ok {
		return 0, 0, false
	}
	if mid, ok = strings.CutSuffix(mid, ".json"); !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(mid, "-")
	if !ok {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || validRange([2]int{lo, hi}) != nil || leaseName(lo, hi) != name {
		return 0, 0, false
	}
	return lo, hi, true
}

// parseLease reads the content of the lease file named name: JSON naming
// the block its name says. The error says what is wrong, for a reader's
// report.
func parseLease(b []byte, name string) (*Lease, error) {
	lo, hi, ok := parseLeaseName(name)
	if !ok {
		return nil, fmt.Errorf("%q is not a lease file name", name)
	}
	var le Lease
	if err := json.Unmarshal(b, &le); err != nil {
		return nil, fmt.Errorf("it is not a port lease (%v)", err)
	}
	if le.Lo != lo || le.Hi != hi {
		return nil, fmt.Errorf("it names ports %d-%d, not the %d-%d of its name", le.Lo, le.Hi, lo, hi)
	}
	return &le, nil
}

// readAllBounded reads f whole, refusing more than maxLeaseSize bytes.
func readAllBounded(f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxLeaseSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxLeaseSize {
		return nil, fmt.Errorf("it is larger than %d bytes", maxLeaseSize)
	}
	return b, nil
}

// write records le in its file in this user's subdirectory sub,
// atomically: a temporary file (0644 whatever the umask, so every user
// can read it), renamed into place. Call with the lock.
func (l *Leases) write(sub string, le *Lease) error {
	b, err := json.MarshalIndent(le, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(sub, tmpPrefix)
	if err != nil {
		return fmt.Errorf("write port lease %d-%d: %w", le.Lo, le.Hi, err)
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Another home's daemon may be reading it (Windows: Replace
		// waits for its handle).
		err = shareopen.Replace(tmp, filepath.Join(sub, leaseName(le.Lo, le.Hi)))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write port lease %d-%d: %w", le.Lo, le.Hi, err)
	}
	return nil
}

// remove deletes a lease file (a path in this user's subdirectory).
func remove(path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove port lease %s: %w", path, err)
	}
	return nil
}

// removeTemps deletes leftover temporary files a killed writer left in
// this user's subdirectory sub. Every write there happens under the lock,
// so with the lock held none is in progress.
func removeTemps(sub string) {
	ents, err := os.ReadDir(sub)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			os.Remove(filepath.Join(sub, e.Name()))
		}
	}
}

// readHomeID reads a home's HomeIDFile.
func readHomeID(homeDir string) (string, error) {
	f, err := openNoFollow(filepath.Join(homeDir, HomeIDFile))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// canonicalDir is dir absolute, with symbolic links resolved where it
// exists, so one home is always named the same.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}
