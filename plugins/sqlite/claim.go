package sqliteadapter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// claimSuffix names the file beside a slice's database that records which
// binky home owns the slice: <dir>/<slice>.db.binky-owner, holding the text
// of sdk.Target.Claim and a newline. No slice's database or SQLite
// companion (-wal, -shm, -journal) has that name, since those end in ".db"
// or in a '-' suffix.
//
// The claim is a file rather than a table in the database so that the
// application never sees it (a table would show in its schema, where
// migration tools report drift, dump it or drop it) and so that a clone,
// which copies the database file, never carries the source's claim: the
// target's claim is written afresh for the home that asked for the clone.
const claimSuffix = ".binky-owner"

// maxClaimFile bounds what is read of a claim file; a claim is at most 200
// bytes, and anything longer is not one.
const maxClaimFile = 1024

// claimTries bounds how often recording a claim starts over when another
// process created the claim file between reading and writing it.
const claimTries = 10

func claimPath(db string) string { return db + claimSuffix }

// claimWhat names the slice in a refusal.
func claimWhat(db string) string { return fmt.Sprintf("sqlite database %s", db) }

// readClaim returns the text in the claim file of the database at db
// (trimmed), and whether the file exists.
func readClaim(db string) (text string, exists bool, err error) {
	p := claimPath(db)
	f, err := openShared(p, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the owner claim %s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, fmt.Errorf("read the owner claim %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", false, sdk.Errorf(sdk.CodeConflict, "read the owner claim %s: it is not a regular file; move it away", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxClaimFile))
	if err != nil {
		return "", false, fmt.Errorf("read the owner claim %s: %w", p, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// checkClaim refuses, with code conflict, a call of t on the database at
// db when another binky home claimed it. It reads nothing when t has no
// owner (an older host).
func checkClaim(t *sdk.Target, db string) error {
	if t.Owner == "" {
		return nil
	}
	have, _, err := readClaim(db)
	if err != nil {
		return err
	}
	return t.CheckClaim(claimWhat(db), have)
}

// claimSlice records t's claim on the database at db before the database is
// made, adopted or replaced: it refuses a database another home claimed,
// adopts one with no claim file (or with one that holds no claim), and
// refreshes its own claim's label. A new claim file appears whole and only
// where there was none (written aside, then hard-linked into place), so of
// two homes claiming the same slice at once exactly one wins.
func claimSlice(t *sdk.Target, db string) error {
	want := t.Claim()
	if want == "" {
		return nil
	}
	for range claimTries {
		have, exists, err := readClaim(db)
		if err != nil {
			return err
		}
		if err := t.CheckClaim(claimWhat(db), have); err != nil {
			return err
		}
		if have == want {
			return nil
		}
		err = writeClaim(claimPath(db), want, !exists)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it meanwhile: read it again
		}
		if err != nil {
			return err
		}
		// Replacing a file that held no claim is not exclusive: read back
		// what stands, in case another home replaced it at the same time.
		have, _, err = readClaim(db)
		if err != nil {
			return err
		}
		return t.CheckClaim(claimWhat(db), have)
	}
	return sdk.Errorf(sdk.CodeConflict, "record the owner claim %s: the file changed under every one of %d tries; retry", claimPath(db), claimTries)
}

// writeClaim writes text to the claim file at p through a temporary file
// beside it. When create is set the file must not exist: the result wraps
// fs.ErrExist when it does. Otherwise the file is replaced.
func writeClaim(p, text string, create bool) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+"-")
	if err != nil {
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	// Readable by all, so another user's binky sharing the directory reads
	// whose slice it is rather than failing to open the file.
	_ = f.Chmod(0o644)
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	if !create {
		if err := os.Rename(tmp, p); err != nil {
			return fmt.Errorf("record the owner claim %s: %w", p, err)
		}
		return nil
	}
	err = os.Link(tmp, p)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// The filesystem has no hard links: create the file exclusively and
	// write it in place.
	out, err := openShared(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	_, err = out.WriteString(text + "\n")
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record the owner claim %s: %w", p, err)
	}
	return nil
}

// dropClaim removes the claim file of the database at db, the last step of
// destroy.
func dropClaim(db string) error {
	if err := os.Remove(claimPath(db)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the owner claim: %w", err)
	}
	return nil
}

// claimErr prefixes err, from reading or writing a claim during verb on
// slice, with the call; a coded *sdk.Error (a refusal) already says all.
func claimErr(verb, slice string, err error) error {
	var se *sdk.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("%s sqlite slice %q: %w", verb, slice, err)
}
