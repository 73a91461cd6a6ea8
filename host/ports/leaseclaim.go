package ports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// IgnoredLease is a file named like a lease that binky does not count: it
// claims nothing another user can verify.
type IgnoredLease struct {
	Path string
	// Owner is the file's owner: a uid on Unix ("1001"), a SID on
	// Windows; "" when it could not be read.
	Owner  string
	Reason string
}

// String is the one line up and doctor print:
// "ignored port lease <path> (owner uid <n>): <reason>".
func (ig IgnoredLease) String() string {
	return fmt.Sprintf("ignored port lease %s (owner %s): %s", ig.Path, ownerLabel(ig.Owner), ig.Reason)
}

// checkClaim verifies what a lease file says against what it is: a lease
// counts only as the claim of the user who owns the file, in that user's
// own subdirectory, for a block one world could have, of ports that user
// could bind. owner is the file's owner, dirOwner its directory's.
func checkClaim(le *Lease, owner, dirOwner string) error {
	named := leaseOwner(le)
	switch {
	case named == "":
		return errors.New("it names no user")
	case named != owner:
		return fmt.Errorf("it names %s but belongs to %s", ownerLabel(named), ownerLabel(owner))
	case dirOwner != owner:
		return fmt.Errorf("it lies in the lease directory of %s, not its owner's", ownerLabel(dirOwner))
	case le.Hi-le.Lo+1 > MaxBlock:
		return fmt.Errorf("it spans %d ports, more than one world's block may (%d)", le.Hi-le.Lo+1, MaxBlock)
	case le.Lo < unprivilegedPortStart() && !isAdminOwner(owner):
		return fmt.Errorf("it covers port %d, below %d, which %s cannot bind", le.Lo, unprivilegedPortStart(), ownerLabel(owner))
	}
	return nil
}

// liveness is what a reader found of a lease's home.
type liveness int

const (
	live    liveness = iota
	gone             // its daemon does not run and its home is gone
	unknown          // its home did not answer in time: not counted, not removed
)

// homeCheckWait bounds a look at a lease's home directory: the lease names
// the path, and a path on a file system that does not answer (a hung
// network mount) must not hold up a reservation.
const homeCheckWait = 2 * time.Second

// leaseLive reports whether le's claim still holds: its home's daemon runs
// (the same process: pid, start time and user), or its home directory
// still exists, belongs to its user, and (when readable) holds its id.
// why says, when it does not, what is gone. The look at the home is
// bounded (homeCheckWait), and at most cap(l.homeChecks) looks wait at
// once: a look that does not end leaves the lease unknown.
func (l *Leases) leaseLive(le *Lease) (liveness, string) {
	if le.Pid > 0 && procAlive(le.Pid, le.PidStart, leaseOwner(le)) {
		return live, ""
	}
	daemon := "it names no daemon"
	if le.Pid > 0 {
		daemon = fmt.Sprintf("its daemon (pid %d) is not running", le.Pid)
	}
	select {
	case l.homeChecks <- struct{}{}:
	default:
		return unknown, fmt.Sprintf("its home %s could not be looked at: too many looks at home directories have not ended", le.HomeDir)
	}
	type result struct {
		ok  bool
		why string
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-l.homeChecks }()
		ok, why := homeLive(le)
		done <- result{ok, why}
	}()
	t := time.NewTimer(homeCheckWait)
	defer t.Stop()
	select {
	case r := <-done:
		if r.ok {
			return live, ""
		}
		return gone, r.why + ", and " + daemon
	case <-t.C:
		return unknown, fmt.Sprintf("its home %s did not answer within %s", le.HomeDir, homeCheckWait)
	}
}

// homeLive reports whether le's home exists and is its user's. A home
// this user cannot look into — another user's private directory — exists
// when the directory that hides it belongs to the lease's user.
func homeLive(le *Lease) (bool, string) {
	dir := le.HomeDir
	if dir == "" || !filepath.IsAbs(dir) {
		return false, "it names no home directory"
	}
	user := leaseOwner(le)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrPermission):
		hider, o := hiddenBy(dir)
		if hider != "" && o == user {
			return true, ""
		}
		return false, fmt.Sprintf("its home %s cannot be seen and %s, which hides it, belongs to %s", dir, hider, ownerLabel(o))
	case err != nil:
		return false, fmt.Sprintf("its home %s does not exist", dir)
	case !fi.IsDir():
		return false, fmt.Sprintf("its home %s is not a directory", dir)
	}
	if o, _ := statOwner(dir, fi); o != user {
		return false, fmt.Sprintf("its home %s belongs to %s", dir, ownerLabel(o))
	}
	id, err := readHomeID(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Sprintf("its home %s has no %s", dir, HomeIDFile)
	case err != nil:
		return true, "" // the owner's, and not readable by this user
	case id != le.HomeID:
		return false, fmt.Sprintf("its home %s was made again (another %s)", dir, HomeIDFile)
	}
	return true, ""
}

// hiddenBy is the nearest ancestor of path this user can look at, which
// denies it the way further, and that directory's owner.
func hiddenBy(path string) (string, string) {
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			o, _ := statOwner(p, fi)
			return p, o
		}
		if !errors.Is(err, fs.ErrPermission) || filepath.Dir(p) == p {
			return "", ""
		}
	}
}
