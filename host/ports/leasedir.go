package ports

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxOwnDirs bounds the names a user's subdirectory may take: <prefix><id>,
// then <prefix><id>.2 … when another user made (squats) the first.
const maxOwnDirs = 16

// DirRefusedError is a lease directory binky does not trust: Reason says
// why, Fix what to do.
type DirRefusedError struct {
	Dir, Reason, Fix string
}

func (e *DirRefusedError) Error() string {
	return fmt.Sprintf("port lease directory %s is refused: %s; %s", e.Dir, e.Reason, e.Fix)
}

// ownDirName is the n-th name (from 1) of the subdirectory of user me.
func ownDirName(me string, n int) string {
	if n == 1 {
		return ownerPrefix + me
	}
	return ownerPrefix + me + "." + strconv.Itoa(n)
}

// parseDirName reads the user out of a subdirectory's name
// (<prefix><id> or <prefix><id>.<n>).
func parseDirName(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, ownerPrefix)
	if !ok || rest == "" {
		return "", false
	}
	id, n, dotted := strings.Cut(rest, ".")
	if id == "" {
		return "", false
	}
	if dotted {
		k, err := strconv.Atoi(n)
		if err != nil || k < 2 || k > maxOwnDirs || strconv.Itoa(k) != n {
			return "", false
		}
	}
	return id, true
}

// prepareTop makes the lease directory when it is missing and checks that
// user me may trust it.
func (l *Leases) prepareTop(me string) error {
	fi, err := os.Lstat(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := makeTopDir(l.dir); err != nil {
			return fmt.Errorf("make port lease directory %s: %w", l.dir, err)
		}
		fi, err = os.Lstat(l.dir)
	}
	if err != nil {
		return fmt.Errorf("port lease directory %s: %w", l.dir, err)
	}
	if err := checkTopDir(l.dir, fi, me); err != nil {
		return err
	}
	return nil
}

// own returns this user's subdirectory of the lease directory, making
// both when missing. The subdirectory is the first of the user's names
// that is a directory the user owns; when every name so far is another
// user's, the next free one is made. Only this user ever writes there.
func (l *Leases) own() (string, error) {
	me := l.me
	if err := l.prepareTop(me); err != nil {
		return "", err
	}
	if l.subdir != "" {
		return l.ensureOwnDir(filepath.Join(l.dir, l.subdir), me)
	}
	for range 3 {
		p, free, squats, err := l.findOwnDir(me)
		if err != nil || p != "" {
			return p, err
		}
		if free == "" {
			return "", fmt.Errorf("every name of your port lease directory in %s is taken by another user (%s); ask root to remove them", l.dir, strings.Join(squats, ", "))
		}
		err = makeOwnDir(free, me)
		if err == nil {
			return free, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("make your port lease directory %s: %w", free, err)
		}
		// Made meanwhile (by another process of this user, or a
		// squatter): look again.
	}
	return "", fmt.Errorf("your port lease directory in %s keeps appearing and vanishing", l.dir)
}

// findOwnDir looks for user me's subdirectory without making anything:
// the path of the first of the user's names that is the user's directory,
// else the first free name and the names other users took.
func (l *Leases) findOwnDir(me string) (path, free string, squats []string, err error) {
	for n := 1; n <= maxOwnDirs; n++ {
		p := filepath.Join(l.dir, ownDirName(me, n))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if free == "" {
				free = p
			}
			continue
		}
		if err != nil {
			return "", "", nil, fmt.Errorf("port lease directory %s: %w", p, err)
		}
		o, _ := statOwner(p, fi)
		if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 && o == me {
			return p, "", nil, nil
		}
		squats = append(squats, fmt.Sprintf("%s by %s", filepath.Base(p), ownerLabel(o)))
	}
	return "", free, squats, nil
}

// ensureOwnDir makes path (a subdirectory of this user's, named by the
// caller) when missing and checks it is this user's directory.
func (l *Leases) ensureOwnDir(path, me string) (string, error) {
	if err := makeOwnDir(path, me); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make your port lease directory %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("your port lease directory %s: %w", path, err)
	}
	if o, _ := statOwner(path, fi); !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || o != me {
		return "", fmt.Errorf("your port lease directory %s is not a directory of yours (it belongs to %s)", path, ownerLabel(o))
	}
	return path, nil
}

// leaseEntry is one lease file a reader looked at.
type leaseEntry struct {
	path  string
	owner string // the file's owner
	lease *Lease
	// why is, for a stale lease, why its claim no longer holds.
	why string
}

// Bounds of what one scan reads: a user may put any number of files in
// their own subdirectory, and anyone may add files at the top.
const (
	// maxLeasesPerUser is the most lease files a user's subdirectory
	// may hold: more, and none of them counts (a user with that many
	// worlds is unlikely; one who wants to slow every reader is not).
	maxLeasesPerUser = 1024
	// maxEntriesPerUser bounds the entries of any name read in one
	// user's subdirectory.
	maxEntriesPerUser = 4 * maxLeasesPerUser
	// maxIgnored is the most ignored files a scan lists; the rest are
	// counted.
	maxIgnored = 100
	// readBatch is how many directory entries are read at a time.
	readBatch = 256
)

// storeScan is what a reader found in the lease directory.
type storeScan struct {
	// valid are the leases whose claims hold: every user's.
	valid []leaseEntry
	// stale are well-formed leases of their owners whose homes are gone
	// and whose daemons do not run: only their owner may remove them,
	// nobody counts them.
	stale []leaseEntry
	// ignored are the files named like leases that claim nothing: not
	// regular files, unreadable, malformed, or not their owner's claim
	// (at most maxIgnored; omitted counts the others).
	ignored []IgnoredLease
	omitted int
}

func (s *storeScan) ignore(ig IgnoredLease) {
	if len(s.ignored) >= maxIgnored {
		s.omitted++
		return
	}
	s.ignored = append(s.ignored, ig)
}

// eachEntry calls f for every entry of dir, reading readBatch entries at
// a time, until f returns false or limit entries were read (limit 0: no
// bound); it reports whether it stopped at the limit.
func eachEntry(dir string, limit int, f func(fs.DirEntry) bool) (bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer d.Close()
	n := 0
	for {
		ents, err := d.ReadDir(readBatch)
		for _, e := range ents {
			if limit > 0 && n == limit {
				return true, nil
			}
			n++
			if !f(e) {
				return false, nil
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// scan reads every user's subdirectory except skip (a path, or "") and
// verifies each lease in it (leaseclaim.go). Old-format leases at the top
// of the directory, and anything else there, are ignored.
func (l *Leases) scan(skip string) (storeScan, error) {
	var out storeScan
	_, err := eachEntry(l.dir, 0, func(e fs.DirEntry) bool {
		path := filepath.Join(l.dir, e.Name())
		if path == skip {
			return true
		}
		if _, _, ok := parseLeaseName(e.Name()); ok {
			out.ignore(IgnoredLease{Path: path, Owner: entryOwner(path, e),
				Reason: "it is an old-format lease at the top of the lease directory, which binky no longer reads"})
			return true
		}
		if _, ok := parseDirName(e.Name()); !ok {
			return true
		}
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			out.ignore(IgnoredLease{Path: path, Owner: entryOwner(path, e),
				Reason: "it is " + kindOf(e.Type()) + ", not a directory"})
			return true
		}
		l.scanDir(path, &out)
		return true
	})
	if err != nil {
		return out, fmt.Errorf("read port leases in %s: %w", l.dir, err)
	}
	return out, nil
}

// scanDir verifies the leases in one user's subdirectory. Its files count
// only as its owner's, whatever its name says; a subdirectory with more
// than maxLeasesPerUser lease files counts for nothing.
func (l *Leases) scanDir(dir string, out *storeScan) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return
	}
	dirOwner, err := statOwner(dir, fi)
	if err != nil {
		return
	}
	var names []fs.DirEntry
	full, err := eachEntry(dir, maxEntriesPerUser, func(e fs.DirEntry) bool {
		if _, _, ok := parseLeaseName(e.Name()); ok {
			names = append(names, e)
		}
		return len(names) <= maxLeasesPerUser
	})
	if err != nil {
		return
	}
	if full || len(names) > maxLeasesPerUser {
		out.ignore(IgnoredLease{Path: dir, Owner: dirOwner,
			Reason: fmt.Sprintf("it holds more than %d lease files (or %d entries), so none of them counts", maxLeasesPerUser, maxEntriesPerUser)})
		return
	}
	for _, e := range names {
		path := filepath.Join(dir, e.Name())
		le, owner, err := readLeaseFile(path, e)
		if err != nil {
			out.ignore(IgnoredLease{Path: path, Owner: owner, Reason: err.Error()})
			continue
		}
		if err := checkClaim(le, owner, dirOwner); err != nil {
			out.ignore(IgnoredLease{Path: path, Owner: owner, Reason: err.Error()})
			continue
		}
		entry := leaseEntry{path: path, owner: owner, lease: le}
		switch state, why := l.leaseLive(le); state {
		case gone:
			entry.why = why
			out.stale = append(out.stale, entry)
		case unknown:
			out.ignore(IgnoredLease{Path: path, Owner: owner, Reason: why})
		default:
			out.valid = append(out.valid, entry)
		}
	}
}

// readLeaseFile opens a lease file without following a symbolic link or
// blocking on a FIFO, checks it is a regular file, and parses it; owner is
// the file's owner (from Lstat when it could not be opened).
func readLeaseFile(path string, e fs.DirEntry) (*Lease, string, error) {
	if !e.Type().IsRegular() {
		return nil, entryOwner(path, e), fmt.Errorf("it is %s, not a regular file", kindOf(e.Type()))
	}
	f, owner, err := openLeaseFile(path)
	if err != nil {
		if owner == "" {
			owner = entryOwner(path, e)
		}
		return nil, owner, err
	}
	defer f.Close()
	b, err := readAllBounded(f)
	if err != nil {
		return nil, owner, fmt.Errorf("it cannot be read: %v", err)
	}
	le, err := parseLease(b, e.Name())
	return le, owner, err
}

// entryOwner is the owner of a directory entry, "" when unknown.
func entryOwner(path string, e fs.DirEntry) string {
	fi, err := e.Info()
	if err != nil {
		return ""
	}
	o, _ := statOwner(path, fi)
	return o
}

// kindOf names a file type for a report.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// LeaseReport is what InspectLeases found.
type LeaseReport struct {
	Dir string
	// Me is this user as the store names users (IgnoredLease.Owner): a
	// uid on Unix, a SID on Windows.
	Me string
	// Missing: the directory does not exist yet (the first daemon makes
	// it).
	Missing bool
	// Mine is this user's subdirectory; "" when there is none yet.
	Mine string
	// Squatted names this user's subdirectory names that other users
	// took ("uid-1001 by uid 1002"): binky uses the next free one.
	Squatted []string
	// Counted are the leases whose claims hold, every user's.
	Counted []Lease
	// Ignored are the lease files that count for nothing (stale ones
	// included: a gone home's, whose daemon does not run), at most 100;
	// Omitted counts the others.
	Ignored []IgnoredLease
	Omitted int
}

// InspectLeases reads the lease store in dir without changing anything
// (for binky doctor). The error is a *DirRefusedError when the directory
// is refused.
func InspectLeases(dir string) (LeaseReport, error) {
	rep := LeaseReport{Dir: dir}
	l, err := OpenLeases(dir, LeaseOptions{})
	if err != nil {
		return rep, err
	}
	rep.Dir, rep.Me = l.dir, l.me
	me := l.me
	fi, err := os.Lstat(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		rep.Missing = true
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("port lease directory %s: %w", l.dir, err)
	}
	if err := checkTopDir(l.dir, fi, me); err != nil {
		return rep, err
	}
	if rep.Mine, _, rep.Squatted, err = l.findOwnDir(me); err != nil {
		return rep, err
	}
	if rep.Mine != "" {
		rep.Squatted = nil
		// Names before the user's own directory that others took.
		for n := 1; n <= maxOwnDirs; n++ {
			p := filepath.Join(l.dir, ownDirName(me, n))
			if p == rep.Mine {
				break
			}
			if fi, err := os.Lstat(p); err == nil {
				o, _ := statOwner(p, fi)
				rep.Squatted = append(rep.Squatted, fmt.Sprintf("%s by %s", filepath.Base(p), ownerLabel(o)))
			}
		}
	}
	s, err := l.scan("")
	if err != nil {
		return rep, err
	}
	for _, e := range s.valid {
		rep.Counted = append(rep.Counted, *e.lease)
	}
	for _, e := range s.stale {
		s.ignore(IgnoredLease{Path: e.path, Owner: e.owner, Reason: e.why})
	}
	rep.Ignored, rep.Omitted = s.ignored, s.omitted
	slices.SortFunc(rep.Ignored, func(a, b IgnoredLease) int { return strings.Compare(a.Path, b.Path) })
	return rep, nil
}
