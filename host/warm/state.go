package warm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/binkyhq/binky/host/golden"
)

// sumVersion starts every setup sum, so a change to how sums are made
// re-runs setups rather than skipping them wrongly.
const sumVersion = "binky-setup-1"

// Record is what binky remembers of one worktree's warm-up, kept in
// $BINKY_HOME/warm/<project>/<worktree>.json.
type Record struct {
	// Path and Identity name the worktree the record is of: a worktree
	// removed and made again under the same name is a new one (its .git
	// file is new), copied and set up again.
	Path     string `json:"path"`
	Identity string `json:"identity"`
	// Copied is when [worktree] copy was done (zero: not yet).
	Copied time.Time `json:"copied,omitzero"`
	// SetupSum is the sum (SetupSum) of the last setup that succeeded;
	// empty when none has.
	SetupSum string    `json:"setup_sum,omitempty"`
	SetupAt  time.Time `json:"setup_at,omitzero"`
}

// Store keeps the records under a BINKY_HOME.
type Store struct{ dir string }

// NewStore is the store of the BINKY_HOME home.
func NewStore(home string) *Store { return &Store{dir: filepath.Join(home, "warm")} }

func (s *Store) path(project, worktree string) string {
	return filepath.Join(s.dir, project, worktree+".json")
}

// Get returns the record of a worktree at path, or an empty one (for that
// path and identity) when there is none or it is of an earlier worktree of
// the same name.
func (s *Store) Get(project, worktree, path string) (*Record, error) {
	id := Identity(path)
	fresh := &Record{Path: path, Identity: id}
	data, err := os.ReadFile(s.path(project, worktree))
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the warm-up record of %s/%s: %w", project, worktree, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.Path != path || r.Identity != id {
		// Unreadable or of another worktree: start over (copy never
		// overwrites, and setup is meant to be re-runnable).
		return fresh, nil
	}
	return &r, nil
}

// Put writes r (0600, atomically: a crash leaves the old record or the new).
func (s *Store) Put(project, worktree string, r *Record) error {
	p := s.path(project, worktree)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("write the warm-up record of %s/%s: %w", project, worktree, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".warm-*")
	if err != nil {
		return fmt.Errorf("write the warm-up record of %s/%s: %w", project, worktree, err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the warm-up record of %s/%s: %w", project, worktree, err)
	}
	return nil
}

// Delete forgets a worktree's record (binky remove).
func (s *Store) Delete(project, worktree string) error {
	err := os.Remove(s.path(project, worktree))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Identity tells one worktree at path from another made there later: the
// time its .git entry was written (git worktree add writes a .git file).
func Identity(path string) string {
	fi, err := os.Lstat(filepath.Join(path, ".git"))
	if err != nil {
		return ""
	}
	return strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// SetupSum is the sum a setup is remembered by: its commands and the
// content of every file its inputs match (globs relative to root, hashed
// as golden template inputs are). Setup runs again when the sum changes.
func SetupSum(root string, commands, inputs []string) (string, []golden.Input, error) {
	in, err := golden.InputsOf(root, inputs)
	if err != nil {
		return "", nil, fmt.Errorf("hash [worktree] inputs: %w", err)
	}
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	field(sumVersion)
	field(strconv.Itoa(len(commands)))
	for _, c := range commands {
		field(c)
	}
	for _, i := range in {
		field(i.Path)
		if i.NoMatch {
			field("no match")
		} else {
			field(i.SHA256)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), in, nil
}
