package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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

// lockName is the lock file every reservation, release and prune holds.
const lockName = ".lock"

// maxLeaseSize bounds what is read of a lease file: a lease is ~300 bytes.
const maxLeaseSize = 64 << 10

// Lease is one leased block, as its file in the lease directory holds it.
type Lease struct {
	Lo       int       `json:"lo"`
	Hi       int       `json:"hi"`
	UID      int       `json:"uid"`      // the user whose daemon wrote it (-1 on Windows)
	HomeID   string    `json:"home_id"`  // the home's id (HomeIDFile)
	HomeDir  string    `json:"home_dir"` // the home's directory, absolute
	Project  string    `json:"project"`
	Worktree string    `json:"worktree"`
	Pid      int       `json:"pid"` // the daemon that wrote it
	Created  time.Time `json:"created"`
}

// leaseFile is one entry of the lease directory.
type leaseFile struct {
	name   string
	lo, hi int
	lease  *Lease // nil when unreadable or malformed: held by an unknown owner
}

// Leases is the machine-global store of port-block leases: one file per
// leased block (block-<lo>-<hi>.json) in a directory that every binky
// process on the machine can read and lock, whatever its home or user.
// Every change is made under an exclusive lock on the directory's .lock
// file, so two homes never lease overlapping blocks. The zero value is not
// usable; see OpenLeases.
type Leases struct {
	dir string
	// sem serializes this process's lockers before they reach the file
	// lock, so waiting goroutines do not each hold an OS thread in flock.
	sem chan struct{}
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

// OpenLeases opens the lease store in dir, making the directory (mode 01777
// on Unix, whatever the umask) and its lock file (0666) when missing. It
// refuses a directory that is a symbolic link, not a directory, or, on
// Unix, one without the sticky bit that others may write or that another
// non-root user owns: there anyone could delete the leases.
func OpenLeases(dir string) (*Leases, error) {
	if dir == "" {
		return nil, errors.New("open port leases: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open port leases in %s: %w", dir, err)
	}
	if err := prepareLeaseDir(abs); err != nil {
		return nil, fmt.Errorf("open port leases in %s: %w", abs, err)
	}
	l := &Leases{dir: abs, sem: make(chan struct{}, 1)}
	f, err := openLockFile(filepath.Join(abs, lockName))
	if err != nil {
		return nil, fmt.Errorf("open port leases in %s: %w", abs, err)
	}
	f.Close()
	return l, nil
}

// Dir is the lease directory.
func (l *Leases) Dir() string { return l.dir }

// lock takes the store's exclusive lock; the returned func releases it.
func (l *Leases) lock(ctx context.Context) (func(), error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("lock port leases: %w", ctx.Err())
	}
	f, err := openLockFile(filepath.Join(l.dir, lockName))
	if err != nil {
		<-l.sem
		return nil, fmt.Errorf("lock port leases: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- lockFile(f) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			<-l.sem
			return nil, fmt.Errorf("lock port leases in %s: %w", l.dir, err)
		}
	case <-ctx.Done():
		// The lock is still being waited for: let it go once it comes.
		go func() {
			if err := <-done; err == nil {
				unlockFile(f)
			}
			f.Close()
			<-l.sem
		}()
		return nil, fmt.Errorf("lock port leases in %s: %w", l.dir, ctx.Err())
	}
	return func() {
		unlockFile(f)
		f.Close()
		<-l.sem
	}, nil
}

// List returns every lease in the store (by file name); a lease
// file that cannot be read is left out.
func (l *Leases) List(ctx context.Context) ([]Lease, error) {
	unlock, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	files, err := l.read()
	if err != nil {
		return nil, err
	}
	var out []Lease
	for _, f := range files {
		if f.lease != nil {
			out = append(out, *f.lease)
		}
	}
	return out, nil
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

// read lists the lease files. Call with the lock.
func (l *Leases) read() ([]leaseFile, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("read port leases: %w", err)
	}
	var out []leaseFile
	for _, e := range ents {
		lo, hi, ok := parseLeaseName(e.Name())
		if !ok {
			continue
		}
		lf := leaseFile{name: e.Name(), lo: lo, hi: hi}
		if e.Type().IsRegular() {
			lf.lease = readLease(filepath.Join(l.dir, e.Name()), lo, hi)
		}
		out = append(out, lf)
	}
	return out, nil
}

// readLease reads one lease file; nil when it cannot be read or does not
// describe the block its name says.
func readLease(path string, lo, hi int) *Lease {
	f, err := openNoFollow(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLeaseSize))
	if err != nil {
		return nil
	}
	var le Lease
	if json.Unmarshal(b, &le) != nil || le.Lo != lo || le.Hi != hi {
		return nil
	}
	return &le
}

// write records le in its file, atomically: a temporary file in the
// directory (0644 whatever the umask, so every user can read it), renamed
// into place. Call with the lock.
func (l *Leases) write(le *Lease) error {
	b, err := json.MarshalIndent(le, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(l.dir, ".tmp-")
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
		err = os.Rename(tmp, filepath.Join(l.dir, leaseName(le.Lo, le.Hi)))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write port lease %d-%d: %w", le.Lo, le.Hi, err)
	}
	return nil
}

// remove deletes a lease file. Call with the lock.
func (l *Leases) remove(name string) error {
	err := os.Remove(filepath.Join(l.dir, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove port lease %s: %w", name, err)
	}
	return nil
}

// removeTemps deletes leftover temporary files a killed writer left. Every
// write happens under the lock, so with the lock held none is in progress.
// Another user's cannot be deleted (sticky directory) and stay.
func (l *Leases) removeTemps() {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			os.Remove(filepath.Join(l.dir, e.Name()))
		}
	}
}

// homeGone reports whether le's home no longer exists: its directory is
// gone, or its HomeIDFile is missing or names another id (the home was
// deleted and made again). Anything this user cannot look at — another
// user's private directory, a read error — counts as live.
func homeGone(le *Lease) bool {
	if le.HomeDir == "" || le.HomeID == "" {
		return false
	}
	fi, err := os.Stat(le.HomeDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	case !fi.IsDir():
		return true
	}
	id, err := readHomeID(le.HomeDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	}
	return id != le.HomeID
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
