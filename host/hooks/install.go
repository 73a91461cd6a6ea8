package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/safefile"
)

// MaxConfig bounds a tool config `binky hook install` reads
// (.claude/settings.json, .config/wt.toml): such files are a few
// kilobytes.
const MaxConfig = 1 << 20

// Install merges binky's hooks into the tool config at rel (a slash path
// such as ".claude/settings.json") under the project top, with merge
// (MergeClaudeSettings, MergeWorktrunk). It returns the file's path and
// whether it changed; a missing file (and its one missing directory) is
// made.
//
// The file comes from a repository someone else may have written, so
// Install trusts none of it:
//   - the directory that holds the file is resolved (symlinks followed)
//     and must lie inside the project top, else ErrOutsideProject;
//   - the file itself must be absent or a regular file of at most
//     MaxConfig bytes: a symlink (wherever it points: /dev/zero, a file
//     outside the project, another file in it) is refused unopened, a
//     FIFO, device or socket is refused without blocking (safefile);
//   - the new content goes to a temporary file of a random name made with
//     O_CREATE|O_EXCL in that directory (os.CreateTemp; an existing name,
//     a symlink included, is never opened), with the old file's mode, and
//     is renamed over the file, which is checked again first to be absent
//     or regular. Nothing else in the directory is written.
func Install(top, rel string, merge func([]byte) ([]byte, bool, error)) (string, bool, error) {
	path := filepath.Join(top, filepath.FromSlash(rel))
	rtop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return path, false, fmt.Errorf("resolve the project directory %s: %w", top, err)
	}
	dir, err := dirInside(rtop, filepath.Dir(filepath.FromSlash(rel)))
	if err != nil {
		return path, false, err
	}
	real := filepath.Join(dir, filepath.Base(rel))
	in, mode, err := readTarget(path, real)
	if err != nil {
		return path, false, err
	}
	out, changed, err := merge(in)
	if err != nil {
		return path, false, fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return path, false, nil
	}
	if err := replace(path, real, out, mode); err != nil {
		return path, false, err
	}
	return path, true, nil
}

// dirInside returns the directory rel names under the resolved project
// top rtop, resolved, making a missing one (os.Mkdir never follows a
// symlink at the name it makes). A component that is a symlink is
// followed only to a directory inside rtop.
func dirInside(rtop, rel string) (string, error) {
	cur := rtop
	if rel == "." {
		return cur, nil
	}
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(next, 0o755); err != nil {
				return "", fmt.Errorf("make the directory %s: %w", next, err)
			}
			cur = next
			continue
		case err != nil:
			return "", err
		case st.IsDir():
			cur = next
			continue
		case st.Mode()&fs.ModeSymlink == 0:
			return "", fmt.Errorf("%s is %s, not a directory; binky leaves it as it is", next, safefile.Kind(st.Mode()))
		}
		to, err := filepath.EvalSymlinks(next)
		if err != nil {
			return "", fmt.Errorf("%s is a symlink binky cannot follow (%v); binky writes hooks only inside the project %s", next, err, rtop)
		}
		if !within(rtop, to) {
			return "", &configError{fmt.Sprintf("%s is a symlink to %s, outside the project %s; binky writes hooks only inside the project", next, to, rtop), ErrOutsideProject}
		}
		if st, err := os.Stat(to); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s is a symlink to %s, which is not a directory; binky leaves it as it is", next, to)
		}
		cur = to
	}
	return cur, nil
}

// readTarget reads the config at real (shown to the user as path): nil
// and mode 0644 when it does not exist yet.
func readTarget(path, real string) ([]byte, fs.FileMode, error) {
	st, err := os.Lstat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if err := checkTarget(path, real, st); err != nil {
		return nil, 0, err
	}
	in, err := safefile.ReadRegularNoFollow(real, MaxConfig)
	if err != nil {
		var se *safefile.Error
		if errors.As(err, &se) {
			return nil, 0, &configError{fmt.Sprintf("%s %s; binky leaves it as it is", path, se.Reason()), se.Err}
		}
		return nil, 0, err
	}
	return in, st.Mode().Perm(), nil
}

// checkTarget refuses a config that is not a regular file, a symlink
// first of all (by its lstat), naming what it is.
func checkTarget(path, real string, st fs.FileInfo) error {
	if st.Mode()&fs.ModeSymlink != 0 {
		to, _ := os.Readlink(real)
		return &configError{fmt.Sprintf("%s is a symlink (to %q); binky never writes through a symlink: make it the file itself, or add binky's hooks to the file it points to by hand", path, to), safefile.ErrNotRegular}
	}
	if err := safefile.CheckMode(real, st.Mode()); err != nil {
		var se *safefile.Error
		errors.As(err, &se)
		return &configError{fmt.Sprintf("%s %s; binky leaves it as it is", path, se.Reason()), safefile.ErrNotRegular}
	}
	return nil
}

// replace writes out to a new temporary file beside real and renames it
// over real.
func replace(path, real string, out []byte, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".binky-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename replaces whatever entry has the name: check again that
	// it is still no symlink (nor anything but a regular file).
	if st, err := os.Lstat(real); err == nil {
		if err := checkTarget(path, real, st); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, real); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// configError is a config (or its directory) Install refuses: the message
// says what it is, and errors.Is finds the reason (safefile.ErrNotRegular,
// safefile.ErrTooLarge, ErrOutsideProject) without the message repeating
// it.
type configError struct {
	msg string
	err error
}

func (e *configError) Error() string { return e.msg }
func (e *configError) Unwrap() error { return e.err }
